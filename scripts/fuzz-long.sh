#!/usr/bin/env bash
# Runs every fuzz target long, one after the other (a million executions each, outside CI).
# CI runs only the seed corpora, as part of `go test ./...`.
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
# Minimising each new interesting input may take 60 s by default, in which nothing else runs; a
# crasher is still minimised for this long.
minimize="${FUZZ_MINIMIZE:-2s}"
targets=(
	"./tools FuzzCall"
	"./agent/textcall FuzzParse"
	"./scene FuzzDecode"
	"./scene FuzzEmbeddedScene"
	"./scene FuzzLimitsCheck"
	"./picture FuzzPrepare"
	"./bot FuzzImport"
	"./bot/slack FuzzEventsHandler"
	"./bot/slack FuzzSocketEnvelope"
	"./bot/telegram FuzzWebhook"
	"./web FuzzPutScene"
)

want=("$@")
logdir="$(mktemp -d)"
failed=0
printf '%-22s %-16s %12s %9s %10s\n' target package execs fuzzing execs/s
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
		continue
	fi
	log="$logdir/$name.log"
	status=ok
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "$parallel" -fuzzminimizetime "$minimize" >"$log" 2>&1 || status=FAIL
	# The last progress line has the totals: "fuzz: elapsed: 1m41s, execs: 1000000 (24316/sec), …";
	# its elapsed time counts fuzzing only (not building, not the seed corpus).
	last=$(grep 'fuzz: elapsed: .*execs: [0-9]' "$log" | tail -1 || true)
	execs=$(grep -o 'execs: [0-9]*' <<<"$last" | awk '{print $2}')
	secs=$(sed -E 's/^fuzz: elapsed: ([0-9hms]+),.*/\1/' <<<"$last" |
		awk '{ t=0; s=$0; if (match(s,/[0-9]+h/)) t+=substr(s,RSTART,RLENGTH-1)*3600;
		       if (match(s,/[0-9]+m/)) t+=substr(s,RSTART,RLENGTH-1)*60;
		       if (match(s,/[0-9]+s/)) t+=substr(s,RSTART,RLENGTH-1); print t }')
	secs=${secs:-0}
	rate=$(awk -v n="${execs:-0}" -v s="$secs" 'BEGIN{ if (s > 0) printf "%.0f", n/s; else print 0 }')
	printf '%-22s %-16s %12s %9s %10s %s\n' "$name" "$pkg" "${execs:-0}" "$secs" "$rate" "$status"
	if [ "$status" != ok ]; then
		failed=1
		tail -30 "$log"
	fi
done
echo "logs: $logdir"
exit $failed
