#!/usr/bin/env bash
# `iotrail report --json --events` on a trace of about 590,000 system
# calls (issue 12: 5.9 s and 285 MB for 590,000 calls), this build against
# a baseline build side by side, alternating, in one run:
#   BASELINE=/path/to/old/iotrail bench/events_json.sh [ROUNDS]
# The workload: fio's 4 KiB pread64 of a file in /dev/shm (no block I/O:
# the calls alone), LOOPS (36) passes over 64 MiB. Each build records it and
# reports its own recording, as a user of that version would (this
# build's recorder writes the side records before the calls that name
# them, and process titles, which an older reader cannot walk past); this
# build also reports the baseline's recording. Prints per round the wall
# time, the CPU time (user + sys) and CPU per million calls, the peak RSS,
# the output's size and event count, then the median speed-up in CPU per
# call. Needs root (record).
set -euo pipefail
cd "$(dirname "$0")/.."
NEW=${IOTRAIL:-$PWD/build/iotrail}
OLD=${BASELINE:-}
ROUNDS=${1:-3}
[ -x "$NEW" ] || { echo "events_json: $NEW is not built (run make)" >&2; exit 1; }
[ -n "$OLD" ] && [ ! -x "$OLD" ] && { echo "events_json: BASELINE=$OLD is not executable" >&2; exit 1; }
WORK=$(mktemp -d /tmp/iotrail-bench-events.XXXXXX)
trap 'rm -rf "$WORK" /dev/shm/iotrail-bench-events.$$' EXIT

# rec BIN TRACE: the workload recorded by BIN; prints its call count
rec() {
	truncate -s 64M /dev/shm/iotrail-bench-events.$$
	"$1" record -o "$2" --layers syscall --comm fio -- fio --name=calls \
		--filename=/dev/shm/iotrail-bench-events.$$ --rw=randread --bs=4k --ioengine=psync \
		--size=64M --loops="${LOOPS:-36}" --output=/dev/null > "$WORK/rec.out" 2>&1 ||
		{ echo "events_json: record failed: $(tail -1 "$WORK/rec.out")" >&2; exit 1; }
	rm -f /dev/shm/iotrail-bench-events.$$
	"$1" report --json "$2" | jq -r .syscall_calls
}
NEWT=$WORK/new.trail OLDT=$WORK/old.trail
ncalls=$(rec "$NEW" "$NEWT")
echo "this build's recording: $ncalls system calls"
if [ -n "$OLD" ]; then
	ocalls=$(rec "$OLD" "$OLDT")
	echo "baseline's recording:   $ocalls system calls"
fi

# one BIN TRACE CALLS: "wall cpu cpu_per_million_calls rss_kb bytes events" of one report
one() {
	local out=$WORK/out.json
	/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$1" report --json --events "$2" > "$out"
	read -r wall user sys rss < "$WORK/time"
	cpu=$(echo "$user + $sys" | bc)
	echo "$wall $cpu $(echo "scale=3; $cpu * 1000000 / $3" | bc) $rss $(stat -c %s "$out") $(grep -o '"exit_ns":' "$out" | wc -l)"
	rm -f "$out"
}

fmt="%6.2f s wall %6.2f s CPU (%5.3f s per million calls) %7d KB RSS, %d bytes, %d events\n"
speedups=""
for r in $(seq "$ROUNDS"); do
	n=$(one "$NEW" "$NEWT" "$ncalls")
	printf "round %d: this build, its recording:  $fmt" "$r" $n
	[ -n "$OLD" ] || continue
	o=$(one "$OLD" "$OLDT" "$ocalls")
	printf "round %d: baseline, its recording:    $fmt" "$r" $o
	x=$(one "$NEW" "$OLDT" "$ocalls")
	printf "round %d: this build, the baseline's: $fmt" "$r" $x
	read -r _ _ operm _ _ oev <<< "$o"
	read -r _ _ nperm _ _ nev <<< "$n"
	read -r _ _ _ _ _ xev <<< "$x"
	[ "$oev" = "$ocalls" ] && [ "$nev" = "$ncalls" ] && [ "$xev" = "$ocalls" ] ||
		echo "events_json: events listed $oev, $nev, $xev for $ocalls and $ncalls calls" >&2
	speedups="$speedups $(echo "scale=2; $operm / $nperm" | bc)"
done
[ -n "$speedups" ] && echo "CPU per call, baseline / this build, per round:$speedups (median $(echo $speedups | tr ' ' '\n' | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p"))"
exit 0
