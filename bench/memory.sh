#!/usr/bin/env bash
# The recorder's memory by default, at the highest IOPS this machine
# reaches: fio 4K random reads, io_uring, QD 32, on a loop device over a
# tmpfs file, traced by `iotrail record -- fio` (every layer this kernel
# supports, default options). While it runs, every millisecond
# (build/bench/memsample), the recorder's
#   - resident memory outside BPF maps (the Rss of /proc/PID/smaps, less
#     the mappings of BPF maps: ring pages are mapped twice to user space
#     and are kernel memory, counted below) and
#   - BPF maps: the memlock of every map it holds an fd of
#     (/proc/PID/fdinfo), ring buffers included
# are read and added up; printed: the peak of that sum while recording
# and apart from it the start-up peak (the probes loading, before COMMAND
# runs: libbpf parses the kernel's BTF in each load, for a few ms; goal for
# both: <= 32 MB), the recorder's VmHWM when COMMAND starts (exact, but it
# counts the rings' pages mapped twice), and the recording's summary line
# with its drops (goal: 0).
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

# one traced run: prints "IOPS SUM_PEAK_KB START_PEAK_KB HWM_KB", the
# summary in $out/rec.log. build/bench/memsample samples the recorder every
# millisecond (resident memory outside BPF maps + the maps' memlock) and
# keeps the peak before COMMAND starts (the probes loading) apart from the
# peak after; COMMAND starts by writing the recorder's VmHWM into $out/hwm,
# which marks the switch.
measure() { # the iotrail binary
	local bin=$1 pid peaks
	rm -f "$out/hwm"
	# shellcheck disable=SC2016 # $PPID and $1 are the inner shell's
	"$bin" record -o "$out/m.trail" -- sh -c 'grep "^VmHWM:" /proc/$PPID/status > "$1"; shift; exec "$@"' \
		sh "$out/hwm" fio --name=mem --filename="$dev" --rw=randread --bs=4k \
		--direct=1 --ioengine=io_uring --iodepth=32 --time_based --runtime="$secs" \
		--size=512M --output-format=json --output="$out/fio.json" > "$out/rec.log" 2>&1 &
	pid=$!
	peaks=$(build/bench/memsample "$pid" "$out/hwm")
	wait "$pid" || { echo "memory: $bin record failed:" >&2; cat "$out/rec.log" >&2; exit 1; }
	# "start KB recording KB samples N"
	echo "$(jq -r '.jobs[0].read.iops | floor' "$out/fio.json") $(awk '{ print $4, $2 }' <<< "$peaks") $(awk '{ print $2 }' "$out/hwm")"
}

show() { # label, what measure printed
	local iops sum start hwm
	read -r iops sum start hwm <<< "$2"
	awk -v l="$1" -v i="$iops" -v s="$sum" -v st="$start" -v h="$hwm" 'BEGIN {
		printf "  %-9s %7d IOPS  recording: %5.1f MB;  start-up: %5.1f MB (VmHWM %5.1f MB)\n",
			l, i, s * 1024 / 1e6, st * 1024 / 1e6, h * 1024 / 1e6 }'
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
echo "goal: recording and start-up <= 32 MB, 0 dropped, 0 lost"
