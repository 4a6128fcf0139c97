#!/usr/bin/env bash
# Runs every fuzz target long, one after the other (issue #9: a million executions each, outside
# CI). CI runs only the seed corpora, as part of `go test ./...`.
#
#   scripts/fuzz-long.sh                      # every target, 1 000 000 executions each
#   FUZZTIME=3m scripts/fuzz-long.sh          # every target for 3 minutes instead
#   FUZZ_PARALLEL=2 scripts/fuzz-long.sh FuzzWebhook FuzzCall   # some targets, 2 workers
#
# Prints, per target, the executions, the seconds and executions per second; a crasher fails the
# script and go test leaves the input under the package's testdata/fuzz/<Target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-1000000x}"
parallel="${FUZZ_PARALLEL:-1}" # the machine class is 2 shared cores: one worker by default
targets=(
	"./tools FuzzCall"
	"./scene FuzzDecode"
	"./scene FuzzEmbeddedScene"
	"./bot FuzzImport"
	"./bot/slack FuzzEventsHandler"
	"./bot/slack FuzzSocketEnvelope"
	"./bot/telegram FuzzWebhook"
	"./web FuzzPutScene"
)

want=("$@")
logdir="$(mktemp -d)"
failed=0
printf '%-22s %-16s %12s %9s %10s\n' target package execs seconds execs/s
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
		continue
	fi
	log="$logdir/$name.log"
	start=$(date +%s.%N)
	status=ok
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "$parallel" >"$log" 2>&1 || status=FAIL
	end=$(date +%s.%N)
	# The last progress line has the total: "fuzz: elapsed: 41s, execs: 1000000 (24316/sec), …"
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.0f", b-a}')
	rate=$(awk -v n="${execs:-0}" -v s="$secs" 'BEGIN{ if (s > 0) printf "%.0f", n/s; else print 0 }')
	printf '%-22s %-16s %12s %9s %10s %s\n' "$name" "$pkg" "${execs:-0}" "$secs" "$rate" "$status"
	if [ "$status" != ok ]; then
		failed=1
		tail -30 "$log"
	fi
done
echo "logs: $logdir"
exit $failed
