#!/usr/bin/env bash
# Recording overhead: fio 4K random reads on a loop device over a tmpfs file
# (io_uring, QD 8 and 32), runs alternating without and with `iotrail
# record` (full per-I/O records), PAIRS rounds per queue depth. Prints each
# round and the median IOPS ratio (traced / untraced) per queue depth.
# Each round also runs fio under bench/hook_floor, which puts on the same
# three tracepoints (1) programs that do nothing and (2) programs that write
# one minimal 64-byte record each, drained as iotrail drains its ring: the
# floor any per-I/O tracer pays here. Each round prints hook_floor's count
# (3 records per completed I/O, 0 not written, or the floor is not one).
# The order inside a round is reversed every other round so that a drift in
# the machine's speed (it is shared) does not favour a side.
#   bench/overhead.sh [PAIRS] [SECONDS]      (defaults: 6 pairs, 4 s per run)
# With BASELINE=path/to/another/iotrail (an older build), each round also
# records with it, so a change to the recorder is measured side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-6}
secs=${2:-4}
[ "$(id -u)" -eq 0 ] || { echo "overhead: needs root" >&2; exit 1; }

. bench/loopdev.sh bench

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
echo "(empty = empty programs on Q, D, C; record = one 64-byte ring record per hook; iotrail = iotrail record)"
rec=(build/iotrail record -o "$out/b.trail" --layers block --dev "$dev" --)
baseline=${BASELINE:-}
old=("$baseline" record -o "$out/o.trail" --layers block --dev "$dev" --)
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "overhead: BASELINE=$baseline is not an executable" >&2; exit 1; }
for qd in 8 32; do
	: > "$out/ratios"
	for i in $(seq 1 "$pairs"); do
		if [ $((i % 2)) -eq 1 ]; then
			base=$(fio_iops "$qd")
			empty=$(fio_iops "$qd" build/bench/hook_floor 0 --)
			minrec=$(fio_iops "$qd" build/bench/hook_floor 1 --)
			floor=$(grep -h '^hook_floor:' "$out/rec.log" | tail -1) || floor="hook_floor printed no count"
			traced=$(fio_iops "$qd" "${rec[@]}")
			summary=$(tail -1 "$out/rec.log")
			oldrec=$([ -z "$baseline" ] && echo 0 || fio_iops "$qd" "${old[@]}")
		else
			oldrec=$([ -z "$baseline" ] && echo 0 || fio_iops "$qd" "${old[@]}")
			traced=$(fio_iops "$qd" "${rec[@]}")
			summary=$(tail -1 "$out/rec.log")
			minrec=$(fio_iops "$qd" build/bench/hook_floor 1 --)
			floor=$(grep -h '^hook_floor:' "$out/rec.log" | tail -1) || floor="hook_floor printed no count"
			empty=$(fio_iops "$qd" build/bench/hook_floor 0 --)
			base=$(fio_iops "$qd")
		fi
		r=$(awk -v a="$traced" -v e="$empty" -v m="$minrec" -v b="$base" -v o="$oldrec" \
			'BEGIN { printf "%.4f %.4f %.4f %.4f", a / b, e / b, m / b, o / b }')
		echo "$r" >> "$out/ratios"
		read -r ratio re rm ro <<< "$r"
		printf "  QD %-3s round %d: untraced %7d  empty %7d (%s)  record %7d (%s)  iotrail %7d IOPS (%s)" \
			"$qd" "$i" "$base" "$empty" "$re" "$minrec" "$rm" "$traced" "$ratio"
		[ -z "$baseline" ] && echo || printf "  baseline %7d (%s)\n" "$oldrec" "$ro"
		printf "      [%s]\n      [%s]\n" "$floor" "$summary"
	done
	printf "QD %s: median IOPS ratio to untraced over %d rounds: empty hooks %s, minimal records %s, iotrail record %s (goal >= 0.97)\n" \
		"$qd" "$pairs" "$(cut -d' ' -f2 "$out/ratios" | median)" "$(cut -d' ' -f3 "$out/ratios" | median)" \
		"$(cut -d' ' -f1 "$out/ratios" | median)"
	[ -z "$baseline" ] || printf "QD %s: median IOPS ratio of the baseline build (%s): %s\n" \
		"$qd" "$baseline" "$(cut -d' ' -f4 "$out/ratios" | median)"
done
