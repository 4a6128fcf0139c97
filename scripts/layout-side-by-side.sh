#!/usr/bin/env bash
# Draws every graph input of the corpus (internal/corpus/testdata/graph) with the own layout, with
# plain Graphviz dot and with ELK (layout/elk), and renders one contact sheet per input (the three
# pictures side by side in that order, each captioned with its key figures) plus OUT/index.html,
# to look at what testdata/layout.md and testdata/layout-elk.md count. The figures themselves need no browser: go test ./internal/corpus -run TestLayoutSideBySide.
#
#   scripts/layout-side-by-side.sh [OUT]      (default OUT: ./layout-side-by-side)
#
# CHROME names the Chromium binary (default: the renderer's own search, chromium on PATH).
# ELK=false leaves ELK out (its layouts take about two minutes); the sheets then show two pictures.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-layout-side-by-side}" && cd "${1:-layout-side-by-side}" && pwd)
cd "$root"
go test ./internal/corpus -run '^TestLayoutSideBySide$' -count=1 -v -layout.elk="${ELK:-true}" -layout.sheets "$out" | grep -v '^=== RUN'
echo "contact sheets in $out/index.html"
