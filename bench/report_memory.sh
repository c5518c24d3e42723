#!/usr/bin/env bash
# The report's memory on a large trace (issue 13: peak RSS of `iotrail
# report` on a 100M-I/O trace <= 1 GiB): a synthetic trace of N I/Os
# written through the trace writer (build/bench/analyzer -g: two disks at
# QD 32 and 8, reads and writes, merges, requeues, partial completions),
# then `iotrail report` on it, text and JSON, each with its peak RSS and
# time (/usr/bin/time).
#   bench/report_memory.sh [IOS...]      (default: 10000000)
# With CALLS=N, the trace has a syscall layer too, N system calls per I/O
# (bench/analyzer -s N: each I/O owned by a pread64/pwrite64 of its
# thread, between them a newfstatat by name and cached preads): the
# syscall layer's analysis on N times IOS calls. With LOSE=1, a kworker's
# write at the start loses its completion event (bench/analyzer -l): its
# trail stays open to the end, as a lost completion holds the block
# watermark back.
# The traces go under $TMPDIR (else /tmp): about 48 bytes an I/O (4.8 GB
# for 100M), removed at the end unless KEEP=1. Run it under
# `flock -x /work/heavy.lock` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
IOTRAIL=${IOTRAIL:-$PWD/build/iotrail}
GEN=${GEN:-$PWD/build/bench/analyzer}
[ -x "$IOTRAIL" ] && [ -x "$GEN" ] || { echo "report_memory: run make first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "report_memory: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
dir=${TMPDIR:-/tmp}
[ $# -gt 0 ] || set -- 10000000
for n in "$@"; do
	trace=$dir/iotrail-report-memory.$n.${CALLS:-0}${LOSE:+.lose}.trail
	[ -s "$trace" ] || "$GEN" -g -n "$n" ${CALLS:+-s "$CALLS"} ${LOSE:+-l} -o "$trace"
	size=$(stat -c %s "$trace")
	for how in json text; do
		flag=""; [ $how = json ] && flag=--json
		/usr/bin/time -f '%M %e' -o "$trace.time" "$IOTRAIL" report $flag "$trace" > "$trace.out"
		read -r peak secs < "$trace.time"
		[ $how = json ] && ios=$(jq -r .ios "$trace.out") && calls=$(jq -r '.syscall_calls // 0' "$trace.out")
		printf 'report_memory: %s I/Os, %s system calls (trace %.0f MiB), report %s: peak RSS %.1f MiB, %s s\n' \
			"$ios" "$calls" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" "$how" \
			"$(awk -v k="$peak" 'BEGIN { print k / 1024 }')" "$secs"
	done
	rm -f "$trace.time" "$trace.out"
	[ "${KEEP:-0}" = 1 ] || rm -f "$trace"
done
