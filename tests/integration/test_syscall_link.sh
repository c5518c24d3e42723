#!/usr/bin/env bash
# Linking system calls to the block layer: O_DIRECT reads of a known size
# from a loop device (over a tmpfs file) issue their bios in the reading
# thread, so each read owns exactly one request, and its block time is
# that request's Q2C. Checked exactly through the aggregates the report
# keeps exact: count, min, max and the (rounded) mean of the reads' block
# times equal those of the device's read Q2C.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh
. tests/integration/lib_syscall.sh

NREADS=32
why=$(sys_blocker)
[ -z "$why" ] && why=$(host_blocker)
if [ -n "$why" ]; then
	skip syscall_block_link "$why"
	exit 0
fi
if ! make_loop 64 none; then
	fail syscall_block_link "cannot set up a loop device"
	exit 1
fi
if ! "$IOTRAIL" record --layers block,syscall --dev "$LOOPNAME" --calls read -o "$TMP/link.trail" -- \
	dd if="$LOOPDEV" of=/dev/null bs=64k count=$NREADS iflag=direct > "$TMP/rec.out" 2>&1; then
	fail syscall_block_link "record failed: $(tail -1 "$TMP/rec.out")"
	exit 1
fi
"$IOTRAIL" report --json --events "$TMP/link.trail" > "$TMP/link.json" 2> "$TMP/rep.err" ||
	{ fail syscall_block_link "report failed: $(head -1 "$TMP/rep.err")"; exit 1; }
# the reads of the device: one request each, block time within the call
jq "[.events[] | select(.call == \"read\" and .file_type == \"blk\" and .ret == 65536)]" \
	"$TMP/link.json" > "$TMP/reads.json"
n=$(jq length "$TMP/reads.json")
one=$(jq '[.[] | select(.block_ios == 1 and .block_ns > 0 and .block_ns <= .latency_ns)] | length' "$TMP/reads.json")
mine=$(jq -c '[([.[].block_ns] | length), ([.[].block_ns] | min), ([.[].block_ns] | max),
	(([.[].block_ns] | add) / length + 0.5 | floor)]' "$TMP/reads.json")
dev=$(jq -c ".groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\") |
	[.count, .latency_ns.min, .latency_ns.max, .latency_ns.avg]" "$TMP/link.json")
if [ "$n" != $NREADS ]; then
	fail syscall_block_link "$n reads of $LOOPNAME in the event list, dd made $NREADS"
elif [ "$one" != $NREADS ]; then
	fail syscall_block_link "$one of $NREADS reads own exactly one request within the call"
elif [ "$mine" != "$dev" ]; then
	fail syscall_block_link "reads' block time [count,min,max,avg] $mine != the device's read Q2C $dev"
else
	pass "syscall_block_link ($NREADS O_DIRECT reads: block time == Q2C, [count,min,max,avg] $mine)"
fi
exit ${FAILED:-0}
