#!/usr/bin/env bash
# Recording overhead: fio 4K random reads on a loop device over a tmpfs file
# (io_uring, QD 8 and 32), runs alternating without and with `iotrail
# record` (full per-I/O records), PAIRS pairs per queue depth. Prints each
# pair and the median IOPS ratio (traced / untraced) per queue depth.
# The order inside a pair alternates (untraced first, then traced first) so
# that a drift in the machine's speed (it is shared) does not favour a side.
#   bench/overhead.sh [PAIRS] [SECONDS]      (defaults: 6 pairs, 4 s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-6}
secs=${2:-4}
[ "$(id -u)" -eq 0 ] || { echo "overhead: needs root" >&2; exit 1; }

img=$(mktemp /dev/shm/iotrail-bench.XXXXXX)
out=$(mktemp -d /tmp/iotrail-bench.XXXXXX)
dev=""
cleanup() { [ -n "$dev" ] && losetup -d "$dev"; rm -f "$img"; rm -rf "$out"; }
trap cleanup EXIT
truncate -s 512M "$img"
dev=$(losetup -f --show --direct-io=on "$img")
dd if=/dev/zero of="$dev" bs=1M count=512 oflag=direct status=none

fio_iops() { # qd, then the command prefix (may be empty)
	local qd=$1; shift
	"$@" fio --name=bench --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=io_uring --iodepth="$qd" --time_based --runtime="$secs" --size=512M \
		--output-format=json --output="$out/fio.json" > "$out/run.log" 2>&1
	[ $# -eq 0 ] || cp "$out/run.log" "$out/rec.log"
	jq -r '.jobs[0].read.iops | floor' "$out/fio.json"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "iotrail record overhead: fio randread 4K io_uring on ${dev} (loop over tmpfs), ${secs}s runs"
for qd in 8 32; do
	: > "$out/ratios"
	for i in $(seq 1 "$pairs"); do
		if [ $((i % 2)) -eq 1 ]; then
			base=$(fio_iops "$qd")
			traced=$(fio_iops "$qd" build/iotrail record -o "$out/b.trail" --layers block --dev "$dev" --)
		else
			traced=$(fio_iops "$qd" build/iotrail record -o "$out/b.trail" --layers block --dev "$dev" --)
			base=$(fio_iops "$qd")
		fi
		summary=$(tail -1 "$out/rec.log")
		ratio=$(awk -v a="$traced" -v b="$base" 'BEGIN { printf "%.4f", a / b }')
		echo "$ratio" >> "$out/ratios"
		printf "  QD %-3s pair %d: untraced %8d IOPS  traced %8d IOPS  ratio %s   [%s]\n" \
			"$qd" "$i" "$base" "$traced" "$ratio" "$summary"
	done
	printf "QD %s: median IOPS ratio traced/untraced = %s over %d pairs (goal >= 0.97)\n" \
		"$qd" "$(median < "$out/ratios")" "$pairs"
done
