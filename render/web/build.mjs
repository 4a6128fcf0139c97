// Builds dist/: one self-contained script (Excalidraw 0.18.1 + every Latin/Cyrillic/Greek font
// inlined as data: URLs), the page that loads it, and the CJK fallback font chunks (Xiaolai),
// which the Go side serves from its embedded copy only when a label needs them.
//
//   npm ci && node build.mjs        (or: go generate ./render)
//
// Why each step:
//   - Excalidraw resolves "./fonts/<Family>/<file>.woff2" at run time against
//     window.EXCALIDRAW_ASSET_PATH, else a CDN. Rewriting the literals to data: URLs means no fetch.
//     Xiaolai (13 MB in 209 unicode-range chunks) stays a relative URL: the page sets
//     EXCALIDRAW_ASSET_PATH to its own origin and the browser fetches only the chunks a label uses.
//   - Non-English locales and mermaid-to-excalidraw are never used when exporting: stubbed out of
//     render.js.
//   - dist/mermaid.js is a second, separate page: mermaid-to-excalidraw with all of Mermaid, and
//     Excalidraw's convertToExcalidrawElements with the same inlined fonts (labels are measured in
//     Excalifont). Only the Mermaid tab loads it, so rendering pays nothing for Mermaid.
//     package.json pins mermaid to 11.12.3 (overrides): mermaid-to-excalidraw 2.2.2 looks subgraphs
//     up by their bare id, and Mermaid 11.13+ prefixes SVG ids with the diagram's id.
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

const plugins = [
  fontInline,
  stub("stub-locale", /^\.\/locales\/[^/]+\.js$/, "export default {};", (p) => /^\.\/locales\/en-/.test(p)),
  stub(
    "stub-mermaid",
    /^@excalidraw\/mermaid-to-excalidraw$/,
    "export const parseMermaidToExcalidraw = async () => { throw new Error('mermaid is not part of this build'); };",
  ),
];

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(path.join(outDir, "fonts", "Xiaolai"), { recursive: true });

const t0 = Date.now();
await esbuild.build({
  entryPoints: ["src/render-entry.js"],
  outfile: path.join(outDir, "render.js"),
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: ["chrome110"],
  define: { "process.env.NODE_ENV": '"production"', "process.env.IS_PREACT": '"false"' },
  conditions: ["production"],
  legalComments: "none",
  logLevel: "warning",
  logOverride: { "empty-import-meta": "silent" },
  plugins,
});
fs.copyFileSync("src/render.html", path.join(outDir, "render.html"));
let cjk = 0;
for (const f of fs.readdirSync(path.join(pkgDir, "fonts", "Xiaolai"))) {
  fs.copyFileSync(path.join(pkgDir, "fonts", "Xiaolai", f), path.join(outDir, "fonts", "Xiaolai", f));
  cjk += fs.statSync(path.join(outDir, "fonts", "Xiaolai", f)).size;
}
const js = fs.statSync(path.join(outDir, "render.js")).size;
console.error(`dist/render.js: ${js} bytes; dist/fonts/Xiaolai: ${cjk} bytes; built in ${Date.now() - t0} ms`);

// The Mermaid page. esbuild inlines Mermaid's dynamic imports (one chunk per diagram type) since
// an iife build has no code splitting, so the page never fetches anything after load.
const t1 = Date.now();
await esbuild.build({
  entryPoints: ["src/mermaid-entry.js"],
  outfile: path.join(outDir, "mermaid.js"),
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: ["chrome110"],
  define: { "process.env.NODE_ENV": '"production"', "process.env.IS_PREACT": '"false"' },
  conditions: ["production"],
  legalComments: "none",
  logLevel: "warning",
  logOverride: { "empty-import-meta": "silent" },
  plugins: plugins.filter((p) => p.name !== "stub-mermaid"),
});
fs.copyFileSync("src/mermaid.html", path.join(outDir, "mermaid.html"));
const mjs = fs.statSync(path.join(outDir, "mermaid.js")).size;
console.error(`dist/mermaid.js: ${mjs} bytes; built in ${Date.now() - t1} ms`);
