#!/usr/bin/env bash
# Export speed (issue 15: Perfetto and CSV >= 2M I/Os per second on a
# 10M-I/O trace; the HTML report in < 10 s and < 5 MB): a synthetic block trace of N I/Os written through the
# trace writer (build/bench/analyzer -g: two disks at QD 32 and 8, reads
# and writes, merges, requeues, partial completions), then each export
# of it timed with /usr/bin/time (wall, CPU, peak RSS): to /dev/null for
# the speed, and, with SIZE=1, to a file under $TMPDIR for its size; the
# HTML report (report --html) always to a file, with its size.
# The trace has no NVMe commands or system calls (the generator writes
# block events only), so `csv --what nvme|calls` are not timed here.
#   bench/export_speed.sh [IOS...]      (default: 10000000)
# Run it under `flock -x /work/heavy.lock` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
IOTRAIL=${IOTRAIL:-$PWD/build/iotrail}
GEN=${GEN:-$PWD/build/bench/analyzer}
[ -x "$IOTRAIL" ] && [ -x "$GEN" ] || { echo "export_speed: run make first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "export_speed: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
dir=${TMPDIR:-/tmp}
[ $# -gt 0 ] || set -- 10000000
for n in "$@"; do
	trace=$dir/iotrail-export-speed.$n.trail
	[ -s "$trace" ] || "$GEN" -g -n "$n" -o "$trace" > /dev/null
	ios=$("$IOTRAIL" export --format csv --what trails "$trace" | tail -n +2 | wc -l)
	for how in "perfetto" "csv --what trails" "report" "html"; do
		if [ "$how" = report ]; then
			cmd=("$IOTRAIL" report "$trace")      # the analysis pass alone, for scale
		elif [ "$how" = html ]; then
			cmd=("$IOTRAIL" report --html -o "$trace.html" "$trace")
		else
			cmd=("$IOTRAIL" export --format $how -o /dev/null "$trace")
		fi
		/usr/bin/time -f '%e %U %S %M' -o "$trace.time" "${cmd[@]}" > /dev/null
		read -r wall user sys peak < "$trace.time"
		size=""
		if [ "$how" = html ]; then
			size=$(awk -v s="$(stat -c %s "$trace.html")" 'BEGIN { printf ", page %.2f MB", s / 1e6 }')
			rm -f "$trace.html"
		elif [ "${SIZE:-0}" = 1 ] && [ "$how" != report ]; then
			"$IOTRAIL" export --format $how -o "$trace.out" "$trace"
			size=$(awk -v s="$(stat -c %s "$trace.out")" -v n="$ios" \
				'BEGIN { printf ", %.0f MiB (%.0f bytes an I/O)", s / 1048576, s / n }')
			rm -f "$trace.out"
		fi
		printf 'export_speed: %s I/Os, %-18s %6.2f s (%.2f s CPU), %.2f M I/Os/s, peak RSS %.0f MiB%s\n' \
			"$ios" "${how/--what /}:" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
			"$(awk -v n="$ios" -v w="$wall" 'BEGIN { print (w > 0 ? n / w / 1e6 : 0) }')" \
			"$(awk -v k="$peak" 'BEGIN { print k / 1024 }')" "$size"
	done
	rm -f "$trace.time"
	[ "${KEEP:-0}" = 1 ] || rm -f "$trace"
done
