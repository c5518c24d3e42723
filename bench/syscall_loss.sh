#!/usr/bin/env bash
# System calls lost to a full ring (issue 11: no lost calls with the
# default rings). The losses of the one-hour run (bench/longrun.sh) came
# in bursts while the machine was loaded: the ring fills faster than the
# recorder, one thread that is not always on a CPU, drains it. This
# reproduces it: HOGS busy loops hold the CPUs (default: one per CPU),
# and `dd bs=1` makes CALLS read/write calls as fast as it can, recorded
# by `iotrail record -- dd` with the default options; printed per round:
# the calls recorded and lost (the recorder's summary). PRODUCERS=N splits
# the calls among N dd processes at once: N producers against the one
# draining thread, each with the same share of the CPUs under the busy loops.
#   bench/syscall_loss.sh [ROUNDS] [CALLS]     (defaults: 3, 2000000)
# With BASELINE=path/to/another/iotrail, each round also runs it,
# alternating; RECORD_ARGS are given to every `iotrail record` (e.g.
# "--ringbuf-mb 8": does a larger ring take the bursts?). With DIRTY=MB,
# a dd writes MB MiB through the page cache next to the trace while it
# records (the recorder's own writes then wait for writeback: does that
# stall the drain?). Run it under `flock -x /work/heavy.lock` on a shared machine.
# The two suspects that block the drain thread itself (issue 13):
#   STALL=freeze  the trace goes to ext4 on a loop device (over a /dev/shm
#                 file), frozen (fsfreeze) FREEZE_S seconds (default 1) in
#                 every two while dd runs: the recorder's writes wait.
#   STALL=title   while dd runs, a new bench/mmap_holder.py (MB MiB, default
#                 512) every 0.3 s: a process at nice 19 that holds its mmap
#                 lock for writing (mprotect loops) while the recorder reads
#                 its title (/proc/PID/cmdline waits on that lock).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
calls=${2:-2000000}
hogs=${HOGS:-$(nproc)}
producers=${PRODUCERS:-1}
baseline=${BASELINE:-}
stall=${STALL:-}
case "$stall" in ""|freeze|title) ;; *) echo "syscall_loss: STALL=$stall: give freeze or title" >&2; exit 1 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "syscall_loss: needs root" >&2; exit 1; }
[ -x build/iotrail ] || { echo "syscall_loss: run make first" >&2; exit 1; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "syscall_loss: BASELINE=$baseline is not an executable" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/iotrail-loss.XXXXXX")
hog_pids=()
mnt="" loopdev=""
cleanup() {
	for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$mnt" ]; then
		fsfreeze -u "$mnt" 2>/dev/null || true
		umount "$mnt" 2>/dev/null || true
	fi
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null || true
	rm -rf "$out" "${img:-}"
}
trap cleanup EXIT
trace_dir=$out
if [ "$stall" = freeze ]; then
	img=$(mktemp /dev/shm/iotrail-loss.XXXXXX)
	truncate -s 512M "$img"
	loopdev=$(losetup -f --show "$img")
	mkfs.ext4 -q -F "$loopdev"
	mnt=$out/mnt
	mkdir -p "$mnt"
	mount "$loopdev" "$mnt"
	trace_dir=$mnt
fi

# stall_while PID: the STALL mode's disturbance until PID (the recorder) ends
stall_while() {
	local h=""
	for _ in $(seq 1 200); do pgrep -P "$1" -x dd > /dev/null && break; sleep 0.05; done
	while kill -0 "$1" 2>/dev/null; do
		case "$stall" in
		freeze)
			fsfreeze -f "$mnt"; sleep "${FREEZE_S:-1}"; fsfreeze -u "$mnt"; sleep 1 ;;
		title)
			[ -z "$h" ] || kill "$h" 2>/dev/null || true
			python3 bench/mmap_holder.py "${MB:-512}" & h=$!
			sleep 0.3 ;;
		esac
	done
	[ -z "$h" ] || { kill "$h" 2>/dev/null || true; wait "$h" 2>/dev/null || true; }
}

for _ in $(seq 1 "$hogs"); do
	sh -c 'while :; do :; done' &
	hog_pids+=($!)
done

one() { # label, binary
	local dirty_pid=""
	if [ -n "${DIRTY:-}" ]; then
		dd if=/dev/zero of="$out/dirty" bs=1M count="$DIRTY" 2>/dev/null &
		dirty_pid=$!
	fi
	# shellcheck disable=SC2086 # RECORD_ARGS: words
	"$2" record ${RECORD_ARGS:-} -o "$trace_dir/l.trail" -- sh -c "for i in \$(seq $producers); do
		dd if=/dev/zero of=/dev/null bs=1 count=$((calls / 2 / producers)) 2> /dev/null & done; wait" \
		> "$out/rec.log" 2>&1 &
	local rec=$!
	[ -z "$stall" ] || stall_while "$rec"
	wait "$rec" || { echo "syscall_loss: $2 record failed:" >&2; cat "$out/rec.log" >&2; exit 1; }
	printf '  %-9s %s%s\n' "$1" "$(grep -o '[0-9]* system calls ([0-9]* lost)' "$out/rec.log" | tail -1)" \
		"$(grep -o "rings went undrained for [0-9.]* s" "$out/rec.log" | tail -1 | sed "s/^/; /")"
	[ -z "$dirty_pid" ] || { kill "$dirty_pid" 2>/dev/null; wait "$dirty_pid" 2>/dev/null || true; }
	rm -f "$trace_dir/l.trail" "$out/dirty"
}

echo "syscall_loss: $calls calls of dd bs=1 ($producers at once) under $hogs busy loops${DIRTY:+, $DIRTY MiB written beside}${stall:+, STALL=$stall}, record ${RECORD_ARGS:-with the default rings}"
for i in $(seq 1 "$rounds"); do
	echo "round $i"
	if [ $((i % 2)) -eq 1 ] || [ -z "$baseline" ]; then
		one current build/iotrail
		[ -z "$baseline" ] || one baseline "$baseline"
	else
		one baseline "$baseline"
		one current build/iotrail
	fi
done
