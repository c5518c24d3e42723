#!/usr/bin/env bash
# A trace write that stalls must not stall the drain (issue 13): the trace
# goes to ext4 on a loop device, and the file system is frozen (fsfreeze)
# for 1 s just as `dd bs=1 count=N` starts (COMMAND freezes it itself,
# after the trace's head is written). The recorder's writes wait for the
# thaw; its rings must not: 0 calls lost, and the trace holds exactly dd's
# N reads of /dev/zero and N writes to /dev/null (ground truth: dd).
# N is small enough that the whole burst fits the write queue compressed
# (~11 bytes a call: the test does not depend on how fast dd runs), and
# large enough that it does not fit the syscall ring (4 MiB, ~110 bytes a
# call): before the writer thread, 61,284 of 120,000 calls were lost here.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh
. tests/integration/lib_syscall.sh

NAME=record_stall_no_loss
N=60000
why=$(sys_blocker)
[ -z "$why" ] && why=$(host_blocker)
[ -z "$why" ] && ! command -v mkfs.ext4 >/dev/null &&
	why="mkfs.ext4 is not installed (scripts/install-deps.sh: e2fsprogs)"
[ -z "$why" ] && ! command -v fsfreeze >/dev/null &&
	why="fsfreeze is not installed (util-linux)"
if [ -n "$why" ]; then
	skip "$NAME" "$why"
	exit 0
fi
MNT=$TMP/mnt
# a test stopped mid-freeze must not leave the file system frozen
trap 'fsfreeze -u "$MNT" 2>/dev/null; umount "$MNT" 2>/dev/null; cleanup' EXIT
mkdir -p "$MNT"
if ! make_loop 64 none || ! mkfs.ext4 -q -F "$LOOPDEV" > "$TMP/mkfs.out" 2>&1 ||
	! mount "$LOOPDEV" "$MNT"; then
	fail "$NAME" "cannot set up ext4 on a loop device: $(tail -1 "$TMP/mkfs.out" 2>/dev/null)"
	exit 1
fi

# dd under a name of its own: other processes' dd calls are not counted
cp "$(command -v dd)" "$TMP/ddstall"
# shellcheck disable=SC2016 # $1, $2, $3 are the inner shell's
"$IOTRAIL" record --layers syscall --comm ddstall --calls read,write --path /dev/zero \
	--path /dev/null -o "$MNT/s.trail" -- sh -c 'fsfreeze -f "$1" || exit 99
		(sleep 1; fsfreeze -u "$1") &
		"$2" if=/dev/zero of=/dev/null bs=1 count="$3" status=none; rc=$?
		wait; exit $rc' sh "$MNT" "$TMP/ddstall" "$N" > "$TMP/rec.out" 2>&1
rc=$?
summary=$(grep '^iotrail record: [0-9]' "$TMP/rec.out" | tail -1)
calls=$(jq_report "$MNT/s.trail" '.syscall_calls' 2>/dev/null)
if [ $rc -ne 0 ]; then
	fail "$NAME" "record (or the freeze: 99) exit $rc: $(tail -1 "$TMP/rec.out")"
elif ! [[ $summary =~ "(0 lost)" ]]; then
	fail "$NAME" "calls lost while the trace's file system was frozen: $summary"
elif [ "$calls" != $((2 * N)) ]; then
	fail "$NAME" "the trace holds $calls calls, dd made $((2 * N)): $summary"
else
	pass "$NAME (1 s frozen: $calls calls of dd's $((2 * N)), 0 lost)"
fi

# The syscall layer overloaded (issue 11: its fixed-size records go into a
# buffer per CPU, and through the CPU's ring when the buffer is full): the
# smallest rings (--ringbuf-mb 1: a 512 KiB buffer and a 128 KiB ring per
# CPU) and the recorder stopped for 1 s while dd makes one-byte reads and
# writes. Calls are lost, and every one is counted: the calls in the trace
# + the calls it says it lost == dd's 2 x N (ground truth: dd's count);
# and the ring took records when the buffer was full (record -v). Side
# records lost meanwhile (the exit title of a process anywhere on the
# machine: sleep's below) are counted apart, not as calls.
NAME=syscall_overload_counts_exact
N=3000000
cp "$(command -v dd)" "$TMP/ddover"
"$IOTRAIL" record -v --ringbuf-mb 1 --layers syscall --comm ddover --calls read,write \
	--path /dev/zero --path /dev/null -o "$TMP/o.trail" -- \
	"$TMP/ddover" if=/dev/zero of=/dev/null bs=1 count="$N" status=none > "$TMP/o.out" 2>&1 &
rec=$!
for i in $(seq 1 100); do pgrep -P $rec -x ddover > /dev/null && break; sleep 0.05; done
sleep 0.2
kill -STOP $rec
sleep 1
running=$(pgrep -P $rec -x ddover > /dev/null && echo yes || echo no)
kill -CONT $rec
wait $rec
rc=$?
summary=$(grep '^iotrail record: [0-9]' "$TMP/o.out" | tail -1)
lost=$(sed -n 's/.* system calls (\([0-9]*\) lost).*/\1/p' <<< "$summary")
ringed=$(sed -n 's/^syscall: \([0-9]*\) records went through the rings.*/\1/p' "$TMP/o.out")
calls=$(jq_report "$TMP/o.trail" '.syscall_calls' 2>/dev/null)
if [ $rc -ne 0 ]; then
	fail "$NAME" "record exit $rc: $(tail -1 "$TMP/o.out")"
elif [ "$running" != yes ]; then
	skip "$NAME" "dd's $((2 * N)) calls ended before the recorder had been stopped 1 s: no overload ($summary)"
elif [ "${lost:-0}" -le 0 ] || [ "${ringed:-0}" -le 0 ]; then
	fail "$NAME" "the recorder stopped 1 s: '$lost' calls lost, '$ringed' records through the rings (both want > 0): $summary"
elif [ $((calls + lost)) != $((2 * N)) ]; then
	fail "$NAME" "the trace holds $calls calls and says $lost lost: $((calls + lost)), dd made $((2 * N))"
else
	pass "$NAME (recorder stopped 1 s: $calls calls + $lost lost == dd's $((2 * N)); $ringed records through the rings when the buffers were full)"
fi

# The draining thread runs at nice -20 (bench/syscall_loss.sh PRODUCERS=16:
# at 0 it lost a quarter of the calls), COMMAND at its own nice value. The
# command reads both: its parent is the recorder, whose main thread drains.
NAME=record_drain_priority
nice_of() { sed 's/^.*) //' "$1" | awk '{ print $17 }'; }
# shellcheck disable=SC2016 # the inner shell's
"$IOTRAIL" record --layers block --dev "$LOOPNAME" -o "$TMP/n.trail" -- \
	sh -c 'sed "s/^.*) //" /proc/$PPID/stat | awk "{ print \$17 }" > "$1"
	       sed "s/^.*) //" /proc/self/stat | awk "{ print \$17 }" >> "$1"' sh "$TMP/nice" \
	> "$TMP/n.out" 2>&1
rc=$?
drain=$(sed -n 1p "$TMP/nice" 2>/dev/null) cmd=$(sed -n 2p "$TMP/nice" 2>/dev/null)
own=$(nice_of /proc/self/stat)
if [ $rc -ne 0 ]; then
	fail "$NAME" "record exit $rc: $(tail -1 "$TMP/n.out")"
elif [ "$drain" != -20 ] || [ "$cmd" != "$own" ]; then
	fail "$NAME" "the draining thread at nice '$drain' (want -20), COMMAND at '$cmd' (want the caller's $own)"
else
	pass "$NAME (the draining thread at nice $drain, COMMAND at $cmd as its caller)"
fi
exit 0
