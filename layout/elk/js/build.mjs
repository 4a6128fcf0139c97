// Builds dist/: elkjs's elk.bundled.js (the layout code and its in-process "worker" in one
// script, no Web Worker) and its licence, for layout/elk to embed and run in goja.
//
//   npm ci && node build.mjs        (or: go generate ./layout/elk)
//
// The script is copied as published, not rebundled: it is already minified, and any change would
// make it differ from the file whose version package.json pins. build checks the version so a
// lock file moved by hand cannot slip another ELK in unnoticed.
import fs from "node:fs";
import path from "node:path";

const pkgDir = path.resolve("node_modules/elkjs");
const outDir = path.resolve("dist");
const want = JSON.parse(fs.readFileSync("package.json", "utf8")).dependencies.elkjs;
const got = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version;
if (got !== want) {
  throw new Error(`node_modules has elkjs ${got}, package.json pins ${want}: run npm ci`);
}

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
fs.copyFileSync(path.join(pkgDir, "lib", "elk.bundled.js"), path.join(outDir, "elk.bundled.js"));
fs.copyFileSync(path.join(pkgDir, "LICENSE.md"), path.join(outDir, "LICENSE.md"));
fs.writeFileSync(path.join(outDir, "VERSION"), got + "\n");
const size = fs.statSync(path.join(outDir, "elk.bundled.js")).size;
console.error(`dist/elk.bundled.js: elkjs ${got}, ${size} bytes`);
