#!/usr/bin/env bash
# The recorder's memory by default, at the highest IOPS this machine
# reaches: fio 4K random reads, io_uring, QD 32, on a loop device over a
# tmpfs file, traced by `iotrail record -- fio` (every layer this kernel
# supports, default options). While it runs, every 50 ms, the recorder's
#   - resident memory outside BPF maps (the Rss of /proc/PID/smaps, less
#     the mappings of BPF maps: ring pages are mapped twice to user space
#     and are kernel memory, counted below) and
#   - BPF maps: the memlock of every map it holds an fd of
#     (/proc/PID/fdinfo), ring buffers included
# are read and added up; printed: the peak of that sum over the run (the
# goal: <= 32 MB), the parts' peaks, the start-up peak (BPF loading, before
# COMMAND runs; libbpf's copy of the kernel's BTF) apart from the peak while
# recording, and the recording's summary line with its drops (goal: 0).
# The start-up peak is also read exactly: the recorder's VmHWM (peak
# resident memory) when COMMAND starts, read by the command itself
# before it execs fio (the 50 ms samples can miss a short peak).
#   bench/memory.sh [ROUNDS] [SECONDS]       (defaults: 3 rounds, 5 s each)
# With BASELINE=path/to/another/iotrail (an older build), each round also
# measures it, alternating, so a change is measured side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
[ "$(id -u)" -eq 0 ] || { echo "memory: needs root" >&2; exit 1; }
baseline=${BASELINE:-}
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "memory: BASELINE=$baseline is not an executable" >&2; exit 1; }

. bench/lib.sh mem

# memlock of the BPF maps PID holds, in bytes (one awk over every fd: a
# sample must be quick)
maps_bytes() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
		awk '/^pos:/ { map = 0 } /^map_type:/ { map = 1 } /^memlock:/ && map { sum += $2 }
		     END { print sum + 0 }'
}

# resident KB of PID outside the mappings of BPF maps
rss_kb() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { map = ($6 == "anon_inode:bpf-map") }
	     /^Rss:/ && !map { kb += $2 } END { print kb + 0 }' /proc/"$1"/smaps 2>/dev/null
}

# one traced run: prints "IOPS RSS_PEAK_KB MAPS_PEAK_BYTES SUM_PEAK_BYTES START_PEAK_BYTES HWM_KB",
# the summary in $out/rec.log
measure() { # the iotrail binary
	local bin=$1 pid rss=0 maps=0 sum=0 start=0 running=0 r m t
	rm -f "$out/hwm"
	# shellcheck disable=SC2016 # $PPID and $1 are the inner shell's
	"$bin" record -o "$out/m.trail" -- sh -c 'grep "^VmHWM:" /proc/$PPID/status > "$1"; shift; exec "$@"' \
		sh "$out/hwm" fio --name=mem --filename="$dev" --rw=randread --bs=4k \
		--direct=1 --ioengine=io_uring --iodepth=32 --time_based --runtime="$secs" \
		--size=512M --output-format=json --output="$out/fio.json" > "$out/rec.log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		# fio is the recorder's child once the probes are attached (looked
		# at first: the reads below then belong to the recording)
		[ "$running" -eq 1 ] || ! pgrep -P "$pid" -x fio > /dev/null || running=1
		r=$(rss_kb "$pid") || r=0
		m=$(maps_bytes "$pid")
		[ -n "$r" ] || r=0
		t=$((r * 1024 + m))
		if [ "$running" -eq 1 ]; then
			[ "$r" -gt "$rss" ] && rss=$r
			[ "$m" -gt "$maps" ] && maps=$m
			[ "$t" -gt "$sum" ] && sum=$t
		else
			[ "$t" -gt "$start" ] && start=$t
		fi
		sleep 0.05
	done
	wait "$pid" || { echo "memory: $bin record failed:" >&2; cat "$out/rec.log" >&2; exit 1; }
	echo "$(jq -r '.jobs[0].read.iops | floor' "$out/fio.json") $rss $maps $sum $start $(awk '{ print $2 }' "$out/hwm")"
}

show() { # label, what measure printed
	local iops rss maps sum start hwm
	read -r iops rss maps sum start hwm <<< "$2"
	awk -v l="$1" -v i="$iops" -v r="$rss" -v m="$maps" -v s="$sum" -v st="$start" -v h="$hwm" 'BEGIN {
		printf "  %-9s %7d IOPS  recording: %5.1f MB (peaks: RSS outside maps %5.1f MB, BPF maps %5.1f MB);  start-up peak %5.1f MB (VmHWM %5.1f MB)\n",
			l, i, s / 1e6, r * 1024 / 1e6, m / 1e6, st / 1e6, h * 1024 / 1e6 }'
	echo "      [$(grep '^iotrail record:' "$out/rec.log" | tail -1)]"
}

echo "iotrail record memory: fio randread 4K io_uring QD 32 on ${dev} (loop over tmpfs), ${secs}s runs, default options"
for i in $(seq 1 "$rounds"); do
	echo "round $i"
	if [ $((i % 2)) -eq 1 ] || [ -z "$baseline" ]; then
		show current "$(measure build/iotrail)"
		[ -z "$baseline" ] || show baseline "$(measure "$baseline")"
	else
		show baseline "$(measure "$baseline")"
		show current "$(measure build/iotrail)"
	fi
done
echo "goal: recording <= 32 MB, 0 dropped, 0 lost"
