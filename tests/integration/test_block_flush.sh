#!/usr/bin/env bash
# Flushes against the kernel's own counters (/sys/block/DEV/stat, read by
# the recorded command itself, so the window is the probes'), on ext4 over
# a loop device with a write cache (the flush machinery runs):
#  1. ten `dd conv=fsync` of new files: each journal commit block is a
#     PREFLUSH|FUA write that completes twice (its data, then the end of
#     its sequence): no completion is taken for an I/O issued before the
#     trace; reads and writes equal diskstats', the device flush commands
#     its flushes, and the record summary's I/O count the report's.
#  2. ten in-place overwrites with fdatasync: each issues a data-less
#     PREFLUSH write, reported as a flush (not a write) and tied to its
#     fdatasync call; diskstats counts those as writes: iotrail's writes
#     plus flush requests equal its writes.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

why=$(host_blocker)
command -v mkfs.ext4 > /dev/null || why=${why:-"mkfs.ext4 is not installed (e2fsprogs)"}
[ -n "$why" ] && { skip flush_sequences "$why"; skip flush_fdatasync "$why"; exit 0; }
make_loop 64 none || { fail flush_sequences "cannot set up a loop device"; exit 1; }
if [ "$(cat /sys/block/$LOOPNAME/queue/write_cache 2>/dev/null)" != "write back" ]; then
	skip flush_sequences "$LOOPDEV has no write cache: the kernel issues no flush"
	skip flush_fdatasync "$LOOPDEV has no write cache: the kernel issues no flush"
	exit 0
fi
if [ "$(wc -w < /sys/block/$LOOPNAME/stat)" -lt 17 ]; then
	skip flush_sequences "/sys/block/$LOOPNAME/stat has no flush counters (kernel before 5.5)"
	skip flush_fdatasync "/sys/block/$LOOPNAME/stat has no flush counters (kernel before 5.5)"
	exit 0
fi
# no lazy init: no background writes of the file system's own
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV" \
	|| { fail flush_sequences "mkfs.ext4 failed"; exit 1; }
MNT=$TMP/mnt
mkdir -p "$MNT"
mount "$LOOPDEV" "$MNT" || { fail flush_sequences "cannot mount ext4 on $LOOPDEV"; exit 1; }
trap 'umount "$MNT" 2>/dev/null; cleanup' EXIT
dd if=/dev/zero of="$MNT/data" bs=4k count=1 status=none
sync
STAT=/sys/block/$LOOPNAME/stat

# record NAME LOOP_BODY: the body runs ten times between two reads of
# diskstats; prints "reads writes flushes" of the delta
record() {
	"$IOTRAIL" record -o "$TMP/$1.trail" --dev "$LOOPNAME" -- sh -c "cat $STAT > $TMP/$1.s0;
		for i in 1 2 3 4 5 6 7 8 9 10; do $2; done; cat $STAT > $TMP/$1.s1" \
		> "$TMP/$1.out" 2>&1 || return 1
	paste "$TMP/$1.s0" "$TMP/$1.s1" | awk '{ print $18 - $1, $22 - $5, $33 - $16 }'
}
# count OP: I/Os of that op in a report
count() { jq -r "[.groups[] | select(.key.op == \"$2\") | .count] | add // 0" "$1"; }

# ---- 1. journal commits: PREFLUSH|FUA writes with data
d=$(record seq "dd if=/dev/zero of=$MNT/f\$i bs=4k count=1 conv=fsync status=none") \
	|| { fail flush_sequences "record failed: $(tail -1 "$TMP/seq.out")"; exit 1; }
read -r dr dw df <<< "$d"
"$IOTRAIL" report --json "$TMP/seq.trail" > "$TMP/seq.json"
rd=$(count "$TMP/seq.json" read) wr=$(count "$TMP/seq.json" write) fl=$(count "$TMP/seq.json" flush)
cmds=$(jq -r '[.flush_commands[].count] | add // 0' "$TMP/seq.json")
unk=$(jq -r '.unknown_completions' "$TMP/seq.json")
ios=$(jq -r '.ios' "$TMP/seq.json")
rec=$(sed -n 's/^iotrail record: \([0-9]*\) I\/Os.*/\1/p' "$TMP/seq.out")
if [ "$unk" = 0 ] && [ "$rd" = "$dr" ] && [ "$((wr + fl))" = "$dw" ] && [ "$cmds" = "$df" ] \
	&& [ "$df" -ge 10 ] && [ "$rec" = "$ios" ]; then
	pass "flush_sequences (10 dd conv=fsync: 0 unknown completions; reads $rd, writes $wr + flush requests $fl == diskstats writes $dw, flush commands $cmds == diskstats flushes $df; record says $rec I/Os, report $ios)"
else
	fail flush_sequences "unknown completions $unk; reads $rd vs $dr, writes $wr + flushes $fl vs $dw, flush commands $cmds vs $df (want >= 10); record $rec vs report $ios"
fi

# ---- 2. fdatasync of an overwrite: a data-less PREFLUSH write each
d=$(record fds "dd if=/dev/urandom of=$MNT/data bs=4k count=1 conv=notrunc,fdatasync status=none") \
	|| { fail flush_fdatasync "record failed: $(tail -1 "$TMP/fds.out")"; exit 1; }
read -r dr dw df <<< "$d"
"$IOTRAIL" report --json "$TMP/fds.trail" > "$TMP/fds.json"
wr=$(count "$TMP/fds.json" write) fl=$(count "$TMP/fds.json" flush)
cmds=$(jq -r '[.flush_commands[].count] | add // 0' "$TMP/fds.json")
tied=$(jq -r '[.syscalls[] | select(.name == "fdatasync") | .block.flushes] | add // 0' "$TMP/fds.json")
zw=$("$IOTRAIL" report --json --group-by op,size "$TMP/fds.trail" \
	| jq -r '[.groups[] | select(.key.op == "write" and .bytes == 0) | .count] | add // 0')
ios=$(jq -r '.ios' "$TMP/fds.json")
rec=$(sed -n 's/^iotrail record: \([0-9]*\) I\/Os.*/\1/p' "$TMP/fds.out")
if [ "$tied" = 10 ] && [ "$fl" -ge 10 ] && [ "$zw" = 0 ] && [ "$((wr + fl))" = "$dw" ] \
	&& [ "$cmds" = "$df" ] && [ "$rec" = "$ios" ]; then
	pass "flush_fdatasync (10 fdatasync calls own 10 flushes; $fl flush requests, no zero-byte write; writes $wr + flushes $fl == diskstats writes $dw; flush commands $cmds == diskstats flushes $df; record $rec == report $ios I/Os)"
else
	fail flush_fdatasync "fdatasync owns $tied flushes (want 10); flush requests $fl, zero-byte writes $zw (want 0); writes $wr + flushes $fl vs diskstats $dw; commands $cmds vs $df; record $rec vs report $ios"
fi
exit ${FAILED:-0}
