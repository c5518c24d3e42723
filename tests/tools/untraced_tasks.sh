#!/usr/bin/env bash
# Which tasks does this kernel run no tracepoint probe for? The cause of
# the lost block completions on the development host (README, Known
# problems): its kernel (6.18.44-fc-v782, a sandbox's build, not a stock
# kernel) runs no probe while a thread of the sandbox's agent (process_api)
# is current: neither ftrace's events in that thread's own context (its
# system calls, its sched_switch away) nor any BPF program, in any context.
# A softirq that runs on the exit of an interrupt taken over such a thread
# runs with it as current, so every BPF program misses that batch of block
# completions, while ftrace still records them.
#
# For SECS seconds (default 5) this counts, per task, sched_switch into the
# task and away from it, from ftrace (a tracefs instance of its own) and,
# when installed, from bpftrace (a BPF program on the same tracepoint).
# A task switched in more than once and never switched away is one whose
# own context no probe sees. Prints those tasks (or that there are none);
# exits 0: it measures, it does not judge.
#   tests/tools/untraced_tasks.sh [SECS]      (as root)
set -u
. "$(dirname "$0")/bpftrace.sh"
secs=${1:-5}
TRACEFS=/sys/kernel/tracing
[ "$(id -u)" -eq 0 ] || { echo "untraced_tasks: needs root" >&2; exit 1; }
[ -d "$TRACEFS/instances" ] || { echo "untraced_tasks: no tracefs at $TRACEFS" >&2; exit 1; }
tmp=$(mktemp -d /tmp/iotrail-untraced.XXXXXX)
inst=$TRACEFS/instances/iotrail-untraced.$$
bt_pid=""
cleanup() {
	[ -n "$bt_pid" ] && kill "$bt_pid" 2>/dev/null && wait "$bt_pid" 2>/dev/null
	if [ -d "$inst" ]; then
		echo 0 > "$inst/events/sched/sched_switch/enable"
		rmdir "$inst"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$inst"
echo 8192 > "$inst/buffer_size_kb"
bt=$(command -v bpftrace || true)
if [ -n "$bt" ]; then
	bt_start 'tracepoint:sched:sched_switch { @in[args->next_pid] = count(); @out[args->prev_pid] = count(); }' \
		"$tmp/bt.out"
fi
echo 1 > "$inst/events/sched/sched_switch/enable"
sleep "$secs"
echo 0 > "$inst/events/sched/sched_switch/enable"
if [ -n "$bt_pid" ]; then
	kill -INT "$bt_pid"; wait "$bt_pid" 2>/dev/null; bt_pid=""
fi
# one line per switch: "in TID COMM" and "out TID COMM"
sed -n 's/.*sched_switch: prev_comm=\(.*\) prev_pid=\([0-9]*\) .* ==> next_comm=\(.*\) next_pid=\([0-9]*\) .*/out \2 \1\nin \4 \3/p' \
	"$inst/trace" > "$tmp/ftrace.sw"
sed -n 's/^@\(in\|out\)\[\([0-9]*\)\]: \([0-9]*\)/\1 \2 \3/p' "$tmp/bt.out" 2>/dev/null > "$tmp/bt.sw"
echo "untraced_tasks: ${secs} s of sched_switch, from ftrace$([ -n "$bt" ] && echo " and bpftrace")"
awk -v have_bt="$([ -n "$bt" ] && echo 1)" '
	FILENAME == ARGV[1] { bt[$1, $2] = $3; next }
	{ n[$1, $2]++; comm[$2] = $3 }
	END {
		found = 0
		for (k in n) {
			split(k, f, SUBSEP)
			if (f[1] != "in" || n[k] < 2 || n["out", f[2]] > 0)
				continue
			found++
			line = sprintf("  tid %s (%s): switched in %d times, away 0 times (ftrace)", f[2], comm[f[2]], n[k])
			if (have_bt)
				line = line sprintf("; bpftrace: in %d, away %d", bt["in", f[2]], bt["out", f[2]])
			print line
		}
		if (!found)
			print "  none: every task switched in was seen switching away"
	}' "$tmp/bt.sw" "$tmp/ftrace.sw"
