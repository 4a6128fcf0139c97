#!/usr/bin/env bash
# Contact sheets of what a change to the layout did: every graph input of the corpus whose own
# drawing differs between revision REV and the working tree, drawn as it was, as it is now and
# by plain dot, side by side with their key figures, plus OUT/index.html (needs Chromium and jq).
#
#   scripts/layout-before-after.sh REV [OUT]      (default OUT: ./layout-before-after)
#
# REV's drawings are made by REV's own `excalibot tools` from today's inputs, in a temporary
# worktree; the working tree's by the corpus test, as TestLayoutSideBySide makes them.
set -euo pipefail

rev=${1:?usage: scripts/layout-before-after.sh REV [OUT]}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${2:-layout-before-after}" && cd "${2:-layout-before-after}" && pwd)
tmp=$(mktemp -d)
cleanup() {
	git -C "$root" worktree remove --force "$tmp/wt" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

git -C "$root" worktree add --detach -q "$tmp/wt" "$rev"
(cd "$tmp/wt" && go build -o "$tmp/excalibot" ./cmd/excalibot)
mkdir -p "$tmp/before"
for in in "$root"/internal/corpus/testdata/graph/*.json; do
	name=$(basename "$in" .json)
	if ! jq -c '.calls[]' "$in" | "$tmp/excalibot" tools -o "$tmp/before/$name.excalidraw" - >"$tmp/$name.log" 2>&1; then
		echo "$name: $rev's tools refused it (left out): $(tail -1 "$tmp/$name.log")" >&2
		rm -f "$tmp/before/$name.excalidraw"
	fi
done
cd "$root"
go test ./internal/corpus -run '^TestLayoutSideBySide$' -count=1 -v -layout.elk=false \
	-layout.before "$tmp/before" -layout.sheets "$out" | grep -E 'drawn differently|^(ok|FAIL|---)'
echo "contact sheets in $out/index.html"
