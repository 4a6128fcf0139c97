// Builds dist/: the hosted editor (React 19 + Excalidraw 0.18.1 in one script, its CSS with the UI
// font inlined) and the chat page's script, each under a content-hashed name, plus the two HTML
// pages that reference them.
//
//   npm ci && node build.mjs        (or: go generate ./web)
//
// Why each step (details in ../shared/reference/rendering.md §3 and §5):
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
  entryPoints: { chat: "src/chat.js", "chat-style": "src/chat.css" },
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
for (const f of fs.readdirSync(outDir).sort()) {
  console.error(`dist/${f}: ${fs.statSync(path.join(outDir, f)).size} bytes`);
}
console.error(`built in ${Date.now() - t0} ms`);
