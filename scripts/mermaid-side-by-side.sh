#!/usr/bin/env bash
# Draws every Mermaid input of the corpus (internal/corpus/testdata/mermaid) twice, with Mermaid's
# own renderer (mermaid-cli, on the Chromium the project already uses) and with excalibot's
# conversion, so the two can be compared side by side (OUT/index.html); and counts the nodes and
# edges Mermaid draws into internal/corpus/testdata/reference.tsv, the "in the source" column of
# the corpus report.
#
#   scripts/mermaid-side-by-side.sh [OUT]      (default OUT: ./mermaid-side-by-side)
#
# mermaid-cli is installed from npm once into MERMAID_CLI_DIR (default
# ~/.cache/excalibot-mermaid-cli), outside the repository, without puppeteer's own browser
# download, and with Mermaid pinned to the version render/web bundles, so both sides parse and lay
# out the same way. CHROME names the Chromium binary (default: chromium on PATH).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-mermaid-side-by-side}" && cd "${1:-mermaid-side-by-side}" && pwd)
cli=${MERMAID_CLI_DIR:-$HOME/.cache/excalibot-mermaid-cli}
chrome=${CHROME:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -n "$chrome" ] || { echo "no Chromium found; set CHROME" >&2; exit 1; }
corpus=$root/internal/corpus/testdata

mermaid_version=$(node -p "require('$root/render/web/package.json').dependencies.mermaid")
if [ ! -x "$cli/node_modules/.bin/mmdc" ] || [ "$(node -p "require('$cli/node_modules/mermaid/package.json').version" 2>/dev/null)" != "$mermaid_version" ]; then
	echo "installing mermaid-cli with mermaid $mermaid_version into $cli" >&2
	mkdir -p "$cli"
	cat >"$cli/package.json" <<EOF
{"private": true, "dependencies": {"@mermaid-js/mermaid-cli": "^11.4.0"}, "overrides": {"mermaid": "$mermaid_version"}}
EOF
	(cd "$cli" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error)
fi
cat >"$cli/puppeteer.json" <<EOF
{"executablePath": "$chrome", "args": ["--no-sandbox", "--disable-gpu"]}
EOF

mkdir -p "$out/mermaid" "$out/excalibot"
ref=$out/reference.tsv
printf '# name\tnodes\tedges  (as Mermaid %s draws them; -1: not compared, see docs/diagram-quality.md)\n' "$mermaid_version" >"$ref"
for f in "$corpus"/mermaid/*.mmd; do
	name=$(basename "$f" .mmd)
	if ! "$cli/node_modules/.bin/mmdc" -q -p "$cli/puppeteer.json" -i "$f" -o "$out/mermaid/$name.svg" -b white >/dev/null 2>"$out/mermaid/$name.err"; then
		echo "$name: Mermaid refused it too: $(head -c 300 "$out/mermaid/$name.err")" >&2
		printf '%s\t-1\t-1\n' "$name" >>"$ref"
		continue
	fi
	"$cli/node_modules/.bin/mmdc" -q -p "$cli/puppeteer.json" -i "$f" -o "$out/mermaid/$name.png" -b white -s 2 >/dev/null 2>&1 || true
	printf '%s\t%s\n' "$name" "$(node "$root/scripts/mermaid-count.js" "$out/mermaid/$name.svg")" >>"$ref"
done
cp "$ref" "$corpus/reference.tsv"

# excalibot's side: the corpus test renders every input it converts.
(cd "$root" && go test ./internal/corpus -run 'TestCorpus$' -count=1 -corpus.png "$out/excalibot") || true

{
	echo '<!doctype html><meta charset="utf-8"><title>Mermaid side by side</title>'
	echo '<style>body{font:14px sans-serif} td{vertical-align:top;width:50%} img{max-width:100%;border:1px solid #ddd}</style>'
	echo '<table><tr><th>Mermaid</th><th>excalibot</th></tr>'
	for f in "$corpus"/mermaid/*.mmd; do
		name=$(basename "$f" .mmd)
		echo "<tr><td colspan=2><h3>$name</h3></td></tr><tr><td><img src=\"mermaid/$name.png\"></td><td><img src=\"excalibot/$name.png\"></td></tr>"
	done
	echo '</table>'
} >"$out/index.html"
echo "wrote $out/index.html and $corpus/reference.tsv" >&2
