package render

import "embed"

// The browser side is built by web/build.mjs and committed, so `go build` needs no npm.
// Rebuild after changing web/src or web/package.json:
//
//go:generate sh -c "cd web && npm ci --no-audit --no-fund && node build.mjs"

// dist holds render.html, render.js (Excalidraw with every Latin, Cyrillic and Greek font inlined),
// fonts/Xiaolai/*.woff2, the CJK fallback chunks the page fetches only for CJK labels, and the
// Mermaid page (mermaid.html, mermaid.js: see mermaid.go), loaded only by the Mermaid tab.
//
//go:embed web/dist
var dist embed.FS
