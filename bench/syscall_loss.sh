#!/usr/bin/env bash
# System calls lost to a full ring (issue 11: no lost calls with the
# default rings). The losses of the one-hour run (bench/longrun.sh) came
# in bursts while the machine was loaded: the ring fills faster than the
# recorder, one thread that is not always on a CPU, drains it. This
# reproduces it: HOGS busy loops hold the CPUs (default: one per CPU),
# and `dd bs=1` makes CALLS read/write calls as fast as it can, recorded
# by `iotrail record -- dd` with the default options; printed per round:
# the calls recorded and lost (the recorder's summary).
#   bench/syscall_loss.sh [ROUNDS] [CALLS]     (defaults: 3, 2000000)
# With BASELINE=path/to/another/iotrail, each round also runs it,
# alternating; RECORD_ARGS are given to every `iotrail record` (e.g.
# "--ringbuf-mb 8": does a larger ring take the bursts?). With DIRTY=MB,
# a dd writes MB MiB through the page cache next to the trace while it
# records (the recorder's own writes then wait for writeback: does that
# stall the drain?). Run it under `flock -x /work/heavy.lock` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
calls=${2:-2000000}
hogs=${HOGS:-$(nproc)}
baseline=${BASELINE:-}
[ "$(id -u)" -eq 0 ] || { echo "syscall_loss: needs root" >&2; exit 1; }
[ -x build/iotrail ] || { echo "syscall_loss: run make first" >&2; exit 1; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "syscall_loss: BASELINE=$baseline is not an executable" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/iotrail-loss.XXXXXX")
hog_pids=()
cleanup() {
	for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
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
	"$2" record ${RECORD_ARGS:-} -o "$out/l.trail" -- dd if=/dev/zero of=/dev/null bs=1 count=$((calls / 2)) \
		> "$out/rec.log" 2>&1 || { echo "syscall_loss: $2 record failed:" >&2; cat "$out/rec.log" >&2; exit 1; }
	printf '  %-9s %s\n' "$1" "$(grep -o '[0-9]* system calls ([0-9]* lost)' "$out/rec.log" | tail -1)"
	[ -z "$dirty_pid" ] || { kill "$dirty_pid" 2>/dev/null; wait "$dirty_pid" 2>/dev/null || true; }
	rm -f "$out/l.trail" "$out/dirty"
}

echo "syscall_loss: $calls calls of dd bs=1 under $hogs busy loops${DIRTY:+, $DIRTY MiB written beside}, record ${RECORD_ARGS:-with the default rings}"
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
