// Prints "NODES<TAB>EDGES" for an SVG that Mermaid drew: the nodes and edges a reader sees in
// Mermaid's own picture, counted the way internal/corpus counts excalibot's (see
// docs/diagram-quality.md). Sequence diagrams print -1 for nodes: excalibot draws each participant
// twice and its activations as boxes, so the counts do not compare.
//   node scripts/mermaid-count.js FILE.svg
const fs = require('fs');
const svg = fs.readFileSync(process.argv[2], 'utf8');
const kind = (svg.match(/aria-roledescription="([^"]*)"/) || [])[1] || '';
const count = (re) => (svg.match(re) || []).length;
let nodes, edges;
if (kind === 'sequence') {
  nodes = -1;
  edges = count(/class="messageLine[01]"/g);
} else {
  nodes = count(/<g class="node[ "]/g);
  // Edges are the paths of the edgePaths groups; `~~~` links are drawn invisible and only shape
  // the layout.
  edges = 0;
  for (const m of svg.matchAll(/<g class="edgePaths">([\s\S]*?)<\/g>/g)) {
    for (const p of m[1].matchAll(/<path\b[^>]*>/g)) {
      if (!/edge-thickness-invisible/.test(p[0])) edges++;
    }
  }
}
process.stdout.write(`${nodes}\t${edges}`);
