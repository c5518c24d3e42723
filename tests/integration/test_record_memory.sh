#!/usr/bin/env bash
# The recorder's memory by default (issue 11: <= 32 MB with 0 drops):
# `iotrail record -- fio` (every layer, default options) over 4K random
# reads at QD 32 on a loop device. While fio runs, the recorder's BPF maps
# are read from /proc/PID/fdinfo and its resident memory outside them from
# /proc/PID/smaps (ring pages are mapped twice there and are kernel memory,
# counted as the maps' memlock). Asserted:
#   - each layer's share has the default size: 2 MiB per possible CPU,
#     a power of two from 4 to 64 MiB (src/record.c), divided among the
#     CPUs (src/hooks.c, it_ring_bytes_per_cpu): each layer's event
#     buffer per CPU takes the share (an array map's values,
#     bpf/ev_buf.bpf.h; at most 2 MiB each) and its ring a part of it
#     (hooks.c: it_ev_bufs_size; the block layer's a quarter: the NVMe/TCP
#     layers write there; the syscall layer's an eighth), or the whole
#     share beyond 2 MiB;
#   - the whole (the rings + resident memory + the other maps, the event
#     buffers among them) stays under 32 MB;
#   - nothing dropped, no system call lost, and fio's reads in the trace
#     (the exactness of that count is test_block_fio.sh's);
#   - the start-up peak, sampled every millisecond while the probes load
#     (build/bench/memsample: resident outside maps + maps), stays under
#     32 MB: it was 36.9-38.5 MB until libbpf's and our copies of the
#     kernel's BTF were handed back on free (src/record.c, start_layers);
#   - the recorder's VmHWM when COMMAND starts (read by
#     the command itself, before it execs fio: the probes are loaded, no
#     ring page written yet) stays under 32 MB. VmHWM counts the rings'
#     pages twice (user space maps their data twice): 16 MiB of it here.
#     It was ~38.6 MB while libbpf parsed the kernel's BTF beside our own
#     parsed copy and the syscall ring was mapped twice over (a ring_buffer
#     of its own, then the shared one); ~28.5 MB after that (src/hooks.c,
#     src/layers/syscall/record_loader.c); 30.8-31.4 MB with this
#     session's threads and layers (over the bound in CI), 28.4-29.0 MB
#     with the rings mapped at attach, after every layer's load.
# bench/memory.sh measures the same at full speed against an older build.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NIOS=90000
why=$(host_blocker)
if [ -n "$why" ]; then
	skip record_memory "$why"
	exit 0
fi
make_loop 128 none || { fail record_memory "cannot set up a loop device"; exit 0; }

ncpu=$(( $(cut -d- -f2 /sys/devices/system/cpu/possible) + 1 ))
ring=4
while [ "$ring" -lt 64 ] && [ "$ring" -lt $((2 * ncpu)) ]; do ring=$((ring * 2)); done
ring=$((ring << 20))
# a ring per CPU for each of the two layers (block, syscall), the total
# divided: the largest power of two within a CPU's share, at least a page
per=4096
while [ $((per * 2)) -le $((ring / ncpu)) ]; do per=$((per * 2)); done
# each layer's rings: a part (its event buffers take the share), or the
# share beyond the buffers' limit
part() {
	local r=4096
	while [ $((r * 2)) -le $((per / $1)) ]; do r=$((r * 2)); done
	[ "$per" -gt $((2 << 20)) ] && r=$per
	echo $r
}
quarter=$(part 4) eighth=$(part 8)
want=$( (for _ in $(seq 1 "$ncpu"); do echo $quarter; echo $eighth; done) | sort -n | xargs)

# shellcheck disable=SC2016 # $PPID and $1 are the inner shell's
"$IOTRAIL" record -o "$TMP/m.trail" -- sh -c 'grep "^VmHWM:" /proc/$PPID/status > "$1"; shift; exec "$@"' \
	sh "$TMP/hwm" $(fio_cmd "$TMP/fio.json" $NIOS --iodepth=32 --loops=3) > "$TMP/rec.out" 2>&1 &
rec=$!
# the start-up peak, sampled every millisecond (it lasts a few: libbpf's
# parse of the kernel's BTF in a load, beside the maps made before)
build/bench/memsample "$rec" "$TMP/hwm" > "$TMP/peaks" 2>&1 &
sampler=$!
rest=0 rings="" samples=0 ringsum=0
while kill -0 "$rec" 2>/dev/null; do
	if pgrep -P "$rec" -x fio > /dev/null; then
		# map_type 27: BPF_MAP_TYPE_RINGBUF
		maps=$(cat /proc/"$rec"/fdinfo/* 2>/dev/null | awk '
			/^map_type:/ { t = $2 } /^max_entries:/ { e = $2 }
			/^memlock:/ && t != "" { if (t == 27) { r = r " " e; rs += $2 } else m += $2; t = "" }
			END { print m + 0, rs + 0, r }')
		kb=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { map = ($6 == "anon_inode:bpf-map") }
			/^Rss:/ && !map { kb += $2 } END { print kb + 0 }' /proc/"$rec"/smaps 2>/dev/null)
		read -r other rs r <<< "$maps"
		if [ -n "$r" ] && [ -n "$kb" ]; then
			rings=$r
			ringsum=$rs
			[ $((kb * 1024 + other)) -gt "$rest" ] && rest=$((kb * 1024 + other))
			samples=$((samples + 1))
		fi
	fi
	sleep 0.05
done
wait "$rec" || { fail record_memory "record failed: $(tail -1 "$TMP/rec.out")"; exit 0; }
wait "$sampler"
# "start KB recording KB samples N"
start_kb=$(awk '$1 == "start" { print $2 }' "$TMP/peaks")
summary=$(grep '^iotrail record:' "$TMP/rec.out" | tail -1)
fio_ios=$(jq -r '.jobs[0].read.total_ios' "$TMP/fio.json")
hwm_kb=$(awk '{ print $2 }' "$TMP/hwm" 2>/dev/null)
reads=$(jq_report "$TMP/m.trail" "[.groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\") | .count] | add // 0")

if [ "$samples" -eq 0 ]; then
	fail record_memory "no sample taken while fio ran (it ran too briefly?): $summary"
elif [ "$(echo $rings | tr ' ' '\n' | sort -n | xargs)" != "$want" ]; then
	fail record_memory "ring buffers of '$(echo $rings)' bytes, want '$want' (two layers, $ncpu CPUs, $ring bytes each; the rings a quarter and an eighth of a CPU's share)"
elif ! [[ $hwm_kb =~ ^[0-9]+$ ]]; then
	fail record_memory "the recorder's VmHWM at COMMAND's start was not read: '$(cat "$TMP/hwm" 2>/dev/null)'"
elif [ $((hwm_kb * 1024)) -gt 32000000 ]; then
	fail record_memory "start-up peak (VmHWM when COMMAND started) $((hwm_kb * 1024)) bytes, over 32 MB"
elif ! [[ $start_kb =~ ^[0-9]+$ ]] || [ "$start_kb" -eq 0 ]; then
	fail record_memory "the start-up peak was not sampled: '$(cat "$TMP/peaks")'"
elif [ $((start_kb * 1024)) -gt 32000000 ]; then
	fail record_memory "start-up peak (resident outside maps + maps, sampled every ms) $((start_kb * 1024)) bytes, over 32 MB"
elif [ $((rest + ringsum)) -gt 32000000 ]; then
	fail record_memory "the rings ($ringsum bytes) and resident memory and other maps (peak $rest bytes) are over 32 MB"
elif ! [[ $summary =~ " 0 dropped" && $summary =~ "(0 lost)" ]]; then
	fail record_memory "events dropped or calls lost with the default rings: $summary"
elif [ "$reads" -lt $((fio_ios * 99 / 100)) ]; then
	fail record_memory "recorded $reads reads on $LOOPNAME, fio did $fio_ios"
else
	pass "record_memory (start-up peak $((start_kb * 1024 / 1000000)) MB sampled every ms, VmHWM $((hwm_kb * 1024 / 1000000)) MB; rings $ncpu x ($((quarter >> 10)) + $((eighth >> 10))) KiB, $((ringsum / 1000000)) MB in all; the rest (event buffers, other maps, resident) peaked at $((rest / 1000000)) MB over $samples samples: $(((rest + ringsum) / 1000000)) MB; 0 dropped; $reads of fio's $fio_ios reads)"
fi
