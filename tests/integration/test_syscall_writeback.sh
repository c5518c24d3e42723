#!/usr/bin/env bash
# Block I/O of no traced call, attributed to its file by the page cache its
# bios carry (the inode on the bio queue event). Ground truth on ext4 over a
# loop device (over a tmpfs file):
#  - writeback: a program writes 8 MiB buffered into wb.dat, then `sync`
#    (not a traced call) makes the flusher (or the syncing thread) write it:
#    the report's block I/O by file gives wb.dat >= 8 MiB of writes, all of
#    it background, under its path, dev and inode;
#  - readahead: with the file's cache dropped (posix_fadvise DONTNEED, via
#    dd iflag=nocache count=0: only this file, not the global drop_caches),
#    a buffered read of the 8 MiB shows >= 8 MiB of block reads of wb.dat;
#  - two blocks rewritten in the middle of the file are written back under
#    its name too (bios that start inside a large folio).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh
. tests/integration/lib_syscall.sh

MB=8
BYTES=$((MB * 1048576))
why=$(sys_blocker)
[ -z "$why" ] && why=$(host_blocker)
[ -z "$why" ] && ! command -v mkfs.ext4 >/dev/null &&
	why="mkfs.ext4 is not installed (scripts/install-deps.sh: e2fsprogs)"
if [ -n "$why" ]; then
	skip syscall_writeback_by_file "$why"
	skip syscall_readahead_by_file "$why"
	skip syscall_writeback_mid_folio "$why"
	exit 0
fi
MNT=$TMP/mnt
trap 'umount "$MNT" 2>/dev/null; cleanup' EXIT
mkdir -p "$MNT"
if ! make_loop 128 none || ! mkfs.ext4 -q -F "$LOOPDEV" > "$TMP/mkfs.out" 2>&1 ||
	! mount "$LOOPDEV" "$MNT"; then
	fail syscall_writeback_by_file "cannot set up ext4 on a loop device: $(tail -1 "$TMP/mkfs.out" 2>/dev/null)"
	exit 1
fi
F=$MNT/wb.dat

# by_file TRACE: the block-by-file entry of $F as "ios read write background dev ino"
by_file() {
	"$IOTRAIL" report --json "$1" | jq -r --arg p "$F" \
		'[.syscall_block.files[] | select(.path == $p)] | if length == 1 then .[0] |
		"\(.ios) \(.read_bytes) \(.write_bytes) \(.background_bytes) \(.dev_major):\(.dev_minor) \(.inode)"
		else "none" end'
}
want_id="$(mountpoint -d "$MNT") "

# -- writeback
if ! "$IOTRAIL" record --layers syscall,block --dev "$LOOPNAME" -o "$TMP/wb.trail" -- \
	sh -c "dd if=/dev/urandom of='$F' bs=1M count=$MB status=none && sync" > "$TMP/wb.out" 2>&1; then
	fail syscall_writeback_by_file "record failed: $(tail -1 "$TMP/wb.out")"
	exit 1
fi
want_id="$want_id$(stat -c %i "$F")"
read -r ios rd wr bg id ino <<< "$(by_file "$TMP/wb.trail")"
un=$("$IOTRAIL" report --json "$TMP/wb.trail" | jq -c '[.syscall_block.unattributed[] | "\(.comm) \(.ios)"]')
if [ "$ios" = none ] || [ -z "$ios" ]; then
	fail syscall_writeback_by_file "no block I/O attributed to $F (unattributed by comm: $un)"
elif [ "$wr" -lt $BYTES ] || [ "$wr" -gt $((2 * BYTES)) ]; then
	fail syscall_writeback_by_file "$wr bytes of block writes attributed to $F, wrote $BYTES"
elif [ "$bg" -lt $BYTES ]; then
	fail syscall_writeback_by_file "only $bg of its $wr written bytes are background (no traced call issued them)"
elif [ "$id $ino" != "$want_id" ]; then
	fail syscall_writeback_by_file "file identity $id $ino, stat says $want_id"
elif ! "$IOTRAIL" report "$TMP/wb.trail" | grep -A12 '^Block I/O by file' | grep -q "wb.dat"; then
	fail syscall_writeback_by_file "the text report's block I/O by file does not list $F"
else
	pass "syscall_writeback_by_file ($wr of $BYTES bytes written back to $F in $ios I/Os, $bg background; dev:inode $id:$ino; unattributed by comm: $un)"
fi

# -- readahead on a cold cache (this file's pages only)
dd if="$F" iflag=nocache count=0 status=none
if ! "$IOTRAIL" record --layers syscall,block --dev "$LOOPNAME" -o "$TMP/ra.trail" -- \
	dd if="$F" of=/dev/null bs=64k status=none > "$TMP/ra.out" 2>&1; then
	fail syscall_readahead_by_file "record failed: $(tail -1 "$TMP/ra.out")"
	exit 1
fi
read -r ios rd wr bg id ino <<< "$(by_file "$TMP/ra.trail")"
if [ "$ios" = none ] || [ -z "$ios" ]; then
	fail syscall_readahead_by_file "no block reads attributed to $F after dropping its cache"
elif [ "$rd" -lt $BYTES ] || [ "$rd" -gt $((2 * BYTES)) ]; then
	fail syscall_readahead_by_file "$rd bytes of block reads attributed to $F, read $BYTES from a cold cache"
elif [ "$id $ino" != "$want_id" ]; then
	fail syscall_readahead_by_file "file identity $id $ino, stat says $want_id"
else
	pass "syscall_readahead_by_file ($rd of $BYTES bytes read into the cache of $F in $ios I/Os; $bg of them background)"
fi

# -- two 4 KiB blocks rewritten inside the cached file: ext4 writes back
# only the dirty blocks, so with large folios (ext4 since v6.16) each bio
# starts at a tail page of its folio, whose own struct page has no mapping
if ! "$IOTRAIL" record --layers syscall,block --dev "$LOOPNAME" -o "$TMP/mid.trail" -- \
	sh -c "dd if=/dev/zero of='$F' bs=4k count=1 seek=269 conv=notrunc status=none &&
	       dd if=/dev/zero of='$F' bs=4k count=1 seek=1030 conv=notrunc status=none && sync" \
	> "$TMP/mid.out" 2>&1; then
	fail syscall_writeback_mid_folio "record failed: $(tail -1 "$TMP/mid.out")"
	exit 1
fi
read -r ios rd wr bg id ino <<< "$(by_file "$TMP/mid.trail")"
if [ "$ios" = none ] || [ -z "$ios" ] || [ "$wr" -lt 8192 ]; then
	fail syscall_writeback_mid_folio "${wr:-0} bytes of block writes attributed to $F, rewrote 8192 inside it"
else
	pass "syscall_writeback_mid_folio ($wr bytes written back to $F for 2 blocks rewritten in place)"
fi
exit ${FAILED:-0}
