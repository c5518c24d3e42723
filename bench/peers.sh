#!/usr/bin/env bash
# iotrail beside the tracers a user would reach for, in one run (issue 11's
# table): fio 4K random reads, io_uring, on a loop device over a tmpfs file
# (mq-deadline), QD 8 and 32, ROUNDS rounds per queue depth in alternating
# order; each configuration's median IOPS ratio to untraced. Configurations:
#   default    iotrail record -- fio (every layer, every device and process)
#   block      iotrail record --layers block --dev DEV
#   floor      bench/hook_floor 1: one minimal 64-byte record at Q, D and C,
#              drained (the floor of any per-I/O tracer here)
#   sysfloor   bench/hook_floor 6: the same into a ring per CPU, plus a
#              record wherever the default writes one for a system call or
#              an io_uring request (the floor of the default's own records)
#   eventclock bench/hook_floor 11: every event the default times for an
#              I/O of fio (seven with io_uring, the floor's three among
#              them), each reading the clock once, no record: the least a
#              tracer that times what the default times pays
#   perf       perf record -a -e block:block_rq_issue -e block:block_rq_complete
#   bpftrace   bpftrace printing each I/O's issue-to-complete latency
#   ftrace     the kernel's block trace events through a tracefs instance's
#              per-CPU buffers into files (what trace-cmd record -e block
#              does; trace-cmd itself cannot enable ftrace on this kernel)
#   biolatency libbpf-tools' biolatency (a histogram in the kernel, no
#              per-I/O record: a lower bound, not a peer of a tracer)
# blktrace and libbpf-tools' biosnoop are tried too. Each peer is first
# tried on a short run: one that exits, or runs but records nothing, is
# printed as such with its own last message and left out. The peers come from Debian:
# `scripts/install-deps.sh --bench` (bpftrace, linux-perf, libbpf-tools,
# blktrace). A peer tool runs around fio: started, given
# SETTLE seconds to attach, then fio, then it is stopped with SIGINT.
#   bench/peers.sh [ROUNDS] [SECONDS]        (defaults: 5 rounds, 4 s per run)
#   PEERS="perf biolatency" picks the peers tried (default: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
secs=${2:-4}
settle=${SETTLE:-2}
[ "$(id -u)" -eq 0 ] || { echo "peers: needs root" >&2; exit 1; }
[ -x build/iotrail ] && [ -x build/bench/hook_floor ] || { echo "peers: build first (make all)" >&2; exit 1; }

. bench/lib.sh peers
echo mq-deadline > "/sys/block/${dev#/dev/}/queue/scheduler"
majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
kdev=$(( (${majmin%:*} << 20) | ${majmin#*:} )) # the kernel's dev_t, as block events carry it

bt_script="tracepoint:block:block_rq_issue /args->dev == $kdev/ { @s[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@s[args->sector]/ {
	printf(\"%d %d\\n\", args->sector, nsecs - @s[args->sector]); delete(@s[args->sector]); }"

echo "$bt_script" > "$out/peer.bt"
tracing=/sys/kernel/tracing/instances/iotrail-peers-$$
peer_pids=""
trap 'stop_peer ftrace; cleanup' EXIT # a peer left running, the tracefs instance

# Starts peer tool $1 in the background (its pids in $peer_pids), its
# output under $out/p/, its messages in $out/p/$1.err
start_peer() {
	local name=$1 f
	rm -rf "$out/p"
	mkdir "$out/p"
	peer_pids=""
	case $name in
	perf) perf record -a -q -e block:block_rq_issue -e block:block_rq_complete \
		-o "$out/p/perf.data" > "$out/p/perf.err" 2>&1 & peer_pids=$! ;;
	bpftrace) bpftrace -o "$out/p/bpftrace.out" "$out/peer.bt" > "$out/p/bpftrace.err" 2>&1 &
		peer_pids=$! ;;
	ftrace) # what trace-cmd does, which cannot enable ftrace here: the block
		# events into a tracefs instance, each CPU's raw buffer read into a file
		if ! { mkdir "$tracing" && echo 1 > "$tracing/events/block/enable"; } 2> "$out/p/ftrace.err"; then
			return 0
		fi
		for f in "$tracing"/per_cpu/cpu*/trace_pipe_raw; do
			cat "$f" > "$out/p/ftrace.${f//\//_}" 2>> "$out/p/ftrace.err" &
			peer_pids="$peer_pids $!"
		done ;;
	biolatency) biolatency -d "${dev#/dev/}" > "$out/p/biolatency.out" 2> "$out/p/biolatency.err" &
		peer_pids=$! ;;
	blktrace) mkdir -p "$out/p/blk"
		blktrace -d "$dev" -D "$out/p/blk" > "$out/p/blktrace.err" 2>&1 & peer_pids=$! ;;
	biosnoop) biosnoop -d "${dev#/dev/}" > "$out/p/biosnoop.out" 2> "$out/p/biosnoop.err" &
		peer_pids=$! ;;
	esac
}

# SIGINT, as Ctrl-C would stop the tools (they flush their output then);
# the readers of ftrace (cat) ignore it in the background: SIGTERM
stop_peer() {
	local p sig=INT
	if [ "$1" = ftrace ] && [ -d "$tracing" ]; then
		echo 0 > "$tracing/events/block/enable"
		sig=TERM
	fi
	for p in $peer_pids; do kill -"$sig" "$p" 2>/dev/null || true; done
	for p in $peer_pids; do wait "$p" 2>/dev/null || true; done
	[ "$1" != ftrace ] || [ ! -d "$tracing" ] || rmdir "$tracing"
}

# Whether peer tool $1 recorded what it traces (a tool that runs but
# records nothing is no peer)
peer_recorded() {
	case $1 in
	perf) [ "$(perf script -i "$out/p/perf.data" 2>/dev/null | head -100 | wc -l)" -ge 100 ] ;;
	bpftrace) [ "$(wc -l < "$out/p/bpftrace.out")" -ge 100 ] ;;
	ftrace) [ "$(cat "$out"/p/ftrace.* 2>/dev/null | wc -c)" -gt 100000 ] ;;
	biolatency) grep -q usecs "$out/p/biolatency.out" ;;
	blktrace) [ "$(cat "$out"/p/blk/* 2>/dev/null | wc -c)" -gt 100000 ] ;;
	biosnoop) [ "$(wc -l < "$out/p/biosnoop.out")" -ge 100 ] ;;
	esac
}

# fio at queue depth $1 while peer tool $2 runs; prints IOPS, or fails
fio_with_peer() {
	local qd=$1 name=$2 iops alive=0 p
	start_peer "$name"
	sleep "$settle"
	for p in $peer_pids; do kill -0 "$p" 2>/dev/null && alive=1; done
	if [ "$alive" -eq 0 ]; then
		stop_peer "$name"
		return 1
	fi
	iops=$(fio_iops "$qd")
	stop_peer "$name"
	echo "$iops"
}

# one configuration at queue depth $2: its IOPS into $out/NAME.iops
run_config() {
	local name=$1 qd=$2
	case $name in
	untraced) fio_iops "$qd" ;;
	default) fio_iops "$qd" build/iotrail record -o "$out/d.trail" -- ;;
	block) fio_iops "$qd" build/iotrail record -o "$out/b.trail" --layers block --dev "$dev" -- ;;
	floor) fio_iops "$qd" build/bench/hook_floor 1 -- ;;
	sysfloor) fio_iops "$qd" build/bench/hook_floor 6 -- ;;
	eventclock) fio_iops "$qd" build/bench/hook_floor 11 -- ;;
	*) fio_with_peer "$qd" "$name" ;;
	esac > "$out/$name.iops"
}

echo "iotrail and its peers: fio randread 4K io_uring on $dev (loop over tmpfs, mq-deadline), ${secs}s runs, $rounds rounds"
echo "kernel $(uname -r); $(perf --version 2>&1 | head -1); bpftrace $(bpftrace --version 2>&1 | awk '{ print $2 }')"
configs=(untraced default block floor sysfloor eventclock)
for p in ${PEERS:-perf bpftrace ftrace biolatency blktrace biosnoop}; do
	tool=$p
	[ "$p" != ftrace ] || tool=cat
	if ! command -v "$tool" > /dev/null; then
		echo "  $p: not installed (scripts/install-deps.sh --bench)"
	elif fio_with_peer 1 "$p" > /dev/null && peer_recorded "$p"; then
		configs+=("$p")
	else
		echo "  $p: cannot run here: $(grep -v '^$' "$out/p/$p.err" 2>/dev/null | tail -1)"
	fi
done
for qd in 8 32; do
	rm -f "$out"/*.ratios
	for i in $(seq 1 "$rounds"); do
		for c in $(round_order "$i" "${configs[@]}"); do run_config "$c" "$qd"; done
		printf "  QD %-3s round %d: %s\n" "$qd" "$i" "$(ratios_line "${configs[@]}")"
	done
	for c in "${configs[@]:1}"; do
		echo "$c $(median < "$out/$c.ratios")" >> "$out/table.$qd"
	done
done
echo
echo "median IOPS ratio to untraced     QD 8    QD 32"
while read -r c r8; do
	printf "  %-30s %6s %8s\n" "$c" "$r8" "$(awk -v c="$c" '$1 == c { print $2 }' "$out/table.32")"
done < "$out/table.8"
