#!/usr/bin/env bash
# Long run (issue 13): one recording under steady load, the recorder's
# memory sampled as it goes, then the report's memory on that trace.
#   bench/longrun.sh [SECONDS] [IOPS]        (defaults: 3600 s, 5000 IOPS)
#   KEEP=1: keep the trace (its directory is printed) to report it again
# The load: fio 4K random reads and writes (70/30) on a loop device over a
# tmpfs file, io_uring QD 8, held at IOPS by fio's rate limit for the
# whole run. The recording: `iotrail record` with its default layers
# (block and syscall) for SECONDS, the trace under $TMPDIR (else /tmp).
# Every 10 s the recorder's resident memory (VmRSS) is printed; at the
# end: its first, lowest and highest sample, the record summary (drops),
# and the peak RSS of `iotrail report` (text, then JSON) on the trace.
# Run it under `flock -x /work/heavy.lock` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3600}
iops=${2:-5000}
IOTRAIL=${IOTRAIL:-$PWD/build/iotrail}
[ "$(id -u)" -eq 0 ] || { echo "longrun: needs root" >&2; exit 1; }
[ -x "$IOTRAIL" ] || { echo "longrun: $IOTRAIL is not built (run make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "longrun: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

img=$(mktemp /dev/shm/iotrail-bench.XXXXXX)
out=$(mktemp -d "${TMPDIR:-/tmp}/iotrail-longrun.XXXXXX")
dev="" fio_pid="" rec_pid=""
cleanup() {
	[ -n "$rec_pid" ] && kill "$rec_pid" 2>/dev/null
	[ -n "$fio_pid" ] && kill "$fio_pid" 2>/dev/null
	wait 2>/dev/null || true
	[ -n "$dev" ] && losetup -d "$dev"
	rm -f "$img"
	[ -n "${KEEP:-}" ] && echo "longrun: kept $out (KEEP)" || rm -rf "$out"
}
trap cleanup EXIT
truncate -s 256M "$img"
dev=$(losetup -f --show --direct-io=on "$img")

# the load first, running before and after the recording's window
fio --name=longrun --filename="$dev" --rw=randrw --rwmixread=70 --bs=4k --direct=1 \
	--ioengine=io_uring --iodepth=8 --rate_iops="$iops" --time_based \
	--runtime=$((secs + 30)) --size=256M > "$out/fio.log" 2>&1 &
fio_pid=$!
sleep 2
"$IOTRAIL" record -o "$out/long.trail" -d "$secs" > "$out/rec.log" 2>&1 &
rec_pid=$!

echo "longrun: $secs s at $iops IOPS on $dev, trace $out/long.trail"
echo "  t(s)  recorder RSS (KiB)  trace (MiB)"
t=0 first="" lo="" hi=0
while kill -0 "$rec_pid" 2>/dev/null; do
	sleep 10
	t=$((t + 10))
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$rec_pid/status" 2>/dev/null) || break
	[ -n "$rss" ] || break
	size=$(stat -c %s "$out/long.trail" 2>/dev/null || echo 0)
	printf '%6d  %18d  %11.1f\n' "$t" "$rss" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')"
	[ -n "$first" ] || first=$rss
	[ -z "$lo" ] || [ "$rss" -lt "$lo" ] && lo=$rss
	[ "$rss" -gt "$hi" ] && hi=$rss
done
wait "$rec_pid" && rc=0 || rc=$?
rec_pid=""
kill "$fio_pid" 2>/dev/null; wait "$fio_pid" 2>/dev/null || true
fio_pid=""
echo "record (exit $rc): $(grep 'iotrail record:' "$out/rec.log" | tail -1)"
echo "recorder RSS: first sample $first KiB, lowest $lo KiB, highest $hi KiB"
for how in text json; do
	flag=""; [ $how = json ] && flag=--json
	/usr/bin/time -f '%M %e' -o "$out/time.$how" "$IOTRAIL" report $flag "$out/long.trail" \
		> "$out/report.$how" 2> "$out/report.$how.err" || true
	read -r peak secs_r < "$out/time.$how"
	echo "report ($how): peak RSS $peak KiB, $secs_r s"
done
grep -E '^events|WARNING|lower bounds|reconciled' "$out/report.text" | sed 's/^/  /'
