// Builds dist/: the hosted editor (React 19 + Excalidraw 0.18.1 in one script, its CSS with the UI
// font inlined) and the chat page's script, each under a content-hashed name, plus the two HTML
// pages that reference them.
//
//   npm ci && node build.mjs        (or: go generate ./web)
//
// Why each step:
//   - Excalidraw resolves "./fonts/<Family>/<file>.woff2" at run time against
//     window.EXCALIDRAW_ASSET_PATH, else a CDN. Rewriting the literals to data: URLs means no fetch.
//     Xiaolai (13 MB of CJK chunks) stays a relative URL: the editor sets EXCALIDRAW_ASSET_PATH to
//     /assets/ and the Go side serves the chunks package render already embeds, so the binary
//     carries one copy.
//   - The CSP allows only the page's own scripts, so nothing is inlined into the HTML; styles go
//     into their own file.
//   - Hashed names let the server cache scripts forever; the HTML pages are never cached.
//   - Non-English locales and mermaid-to-excalidraw (most of mermaid) are stubbed out.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";

const pkgDir = path.resolve("node_modules/@excalidraw/excalidraw/dist/prod");
const outDir = path.resolve("dist");

const fontInline = {
  name: "font-inline",
  setup(build) {
    build.onLoad({ filter: /@excalidraw[\\/]excalidraw[\\/]dist[\\/]prod[\\/].*\.js$/ }, async (args) => {
      let src = await fs.promises.readFile(args.path, "utf8");
      let n = 0;
      src = src.replace(/"\.\/fonts\/([A-Za-z]+)\/([^"]+\.woff2)"/g, (m, family, file) => {
        if (family === "Xiaolai") return m;
        n++;
        const b64 = fs.readFileSync(path.join(pkgDir, "fonts", family, file)).toString("base64");
        return JSON.stringify(`data:font/woff2;base64,${b64}`);
      });
      if (n) console.error(`font-inline: ${path.basename(args.path)}: ${n} font files inlined`);
      return { contents: src, loader: "js" };
    });
  },
};

const stub = (name, filter, contents, keep = () => false) => ({
  name,
  setup(build) {
    build.onResolve({ filter }, (args) => (keep(args.path) ? undefined : { path: args.path, namespace: name }));
    build.onLoad({ filter: /.*/, namespace: name }, () => ({ contents, loader: "js" }));
  },
});

const common = {
  bundle: true,
  minify: true,
  platform: "browser",
  target: ["chrome110", "firefox115", "safari16"],
  legalComments: "none",
  logLevel: "warning",
  entryNames: "[name]-[hash]",
  metafile: true,
};

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
const t0 = Date.now();

const editor = await esbuild.build({
  ...common,
  entryPoints: { editor: "src/editor.jsx" },
  outdir: outDir,
  format: "iife",
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"', "process.env.IS_PREACT": '"false"' },
  conditions: ["production"],
  logOverride: { "empty-import-meta": "silent" },
  plugins: [
    fontInline,
    stub("stub-locale", /^\.\/locales\/[^/]+\.js$/, "export default {};", (p) => /^\.\/locales\/en-/.test(p)),
    stub(
      "stub-mermaid",
      /^@excalidraw\/mermaid-to-excalidraw$/,
      "export const parseMermaidToExcalidraw = async () => { throw new Error('mermaid is not part of this build'); };",
    ),
  ],
});
const editorCss = await esbuild.build({
  ...common,
  entryPoints: { "editor-style": "src/editor.css" },
  outdir: outDir,
  loader: { ".woff2": "dataurl", ".png": "dataurl", ".svg": "dataurl" },
});
const chat = await esbuild.build({
  ...common,
  entryPoints: { chat: "src/chat.js", "chat-style": "src/chat.css", "asset-path": "src/asset-path.js" },
  outdir: outDir,
  format: "iife",
});

// outputs maps an entry's name ("editor", "chat-style") to its hashed file name.
const outputs = {};
for (const r of [editor, editorCss, chat]) {
  for (const file of Object.keys(r.metafile.outputs)) {
    const base = path.basename(file);
    outputs[base.replace(/-[A-Z0-9]+\.(js|css)$/, "")] = base;
  }
}
for (const page of ["editor.html", "chat.html"]) {
  let html = fs.readFileSync(path.join("src", page), "utf8");
  html = html.replace(/\{\{([a-z-]+)\}\}/g, (m, name) => {
    if (!outputs[name]) throw new Error(`${page}: no output named ${name}`);
    return "/assets/" + outputs[name];
  });
  fs.writeFileSync(path.join(outDir, page), html);
}
// Test only (not embedded): Excalidraw's own share-link codec, compressData/decompressData from
// data/encode.ts, so the Go encoder can be checked against it in Chromium. The package ships
// encode.ts only inside a source map; encryption.ts is not shipped, so a WebCrypto shim with the
// same contract (JWK "k" of an A128GCM key, 12-byte IV) stands in for it.
{
  const devDir = "node_modules/@excalidraw/excalidraw/dist/dev";
  let map, i = -1;
  for (const f of fs.readdirSync(devDir).filter((f) => f.endsWith(".js.map"))) {
    map = JSON.parse(fs.readFileSync(path.join(devDir, f), "utf8"));
    i = map.sources.findIndex((s) => s.endsWith("/data/encode.ts"));
    if (i >= 0) break;
  }
  if (i < 0) throw new Error("data/encode.ts not found in the package's source maps");
  const tmp = path.resolve(".share-codec");
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  fs.writeFileSync(path.join(tmp, "encode.ts"), map.sourcesContent[i]);
  fs.writeFileSync(
    path.join(tmp, "encryption.ts"),
    `const importKey = (k, usage) => crypto.subtle.importKey("jwk", { alg: "A128GCM", ext: true, k, key_ops: ["encrypt", "decrypt"], kty: "oct" }, { name: "AES-GCM", length: 128 }, false, [usage]);
export const encryptData = async (key, data) => {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const encryptedBuffer = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await importKey(key, "encrypt"), data);
  return { encryptedBuffer, iv };
};
export const decryptData = async (iv, encrypted, key) => crypto.subtle.decrypt({ name: "AES-GCM", iv }, await importKey(key, "decrypt"), encrypted);
`,
  );
  fs.writeFileSync(
    path.join(tmp, "entry.ts"),
    `import { compressData, decompressData } from "./encode";\nwindow.ExcalidrawShareCodec = { compressData, decompressData };\n`,
  );
  await esbuild.build({
    entryPoints: [path.join(tmp, "entry.ts")],
    outfile: path.resolve("../testdata/share-codec.js"),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["chrome110"],
    legalComments: "none",
    logLevel: "warning",
    banner: { js: "// Generated by web/ui/build.mjs: Excalidraw 0.18.1 data/encode.ts (MIT) + pako, for tests." },
  });
  fs.rmSync(tmp, { recursive: true, force: true });
  console.error(`../testdata/share-codec.js: ${fs.statSync("../testdata/share-codec.js").size} bytes`);
}
for (const f of fs.readdirSync(outDir).sort()) {
  console.error(`dist/${f}: ${fs.statSync(path.join(outDir, f)).size} bytes`);
}
console.error(`built in ${Date.now() - t0} ms`);
