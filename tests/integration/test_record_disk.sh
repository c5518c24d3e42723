#!/usr/bin/env bash
# The trace file on disk: created 0600 (it holds paths, commands and
# process names), and a full file system stops the recording cleanly: one
# line (ENOSPC, what the file keeps, what to do), exit status 1, the
# workload undisturbed (fio does all its I/Os without an error), and a file
# that reads up to its last complete chunk, which the writer cut it back to.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

why=$(host_blocker)
if [ -n "$why" ]; then
	for t in file_mode file_mode_existing enospc; do skip "record_$t" "$why"; done
	exit 0
fi
FULL=""
cleanup_disk() {
	[ -n "$FULL" ] && umount "$FULL" 2>/dev/null
	cleanup
}
trap cleanup_disk EXIT
make_loop 128 none || { fail record_disk_setup "cannot set up a loop device"; exit 1; }

# 0600, for a new file and for one that was there with 0644 (O_TRUNC alone
# keeps the old mode)
(umask 022; "$IOTRAIL" record -o "$TMP/new.trail" --layers block --dev "$LOOPNAME" -d 0.3 \
	> "$TMP/mode.out" 2>&1)
mode=$(stat -c %a "$TMP/new.trail" 2>/dev/null)
[ "$mode" = 600 ] && pass "record_file_mode (a new trace file is $mode under umask 022)" \
	|| fail record_file_mode "new trace file has mode ${mode:-none}, want 600: $(tail -1 "$TMP/mode.out")"
(umask 022; : > "$TMP/old.trail"; chmod 644 "$TMP/old.trail")
"$IOTRAIL" record -o "$TMP/old.trail" --layers block --dev "$LOOPNAME" -d 0.3 > "$TMP/mode.out" 2>&1
mode=$(stat -c %a "$TMP/old.trail" 2>/dev/null)
[ "$mode" = 600 ] && pass "record_file_mode_existing (a 644 file recorded over is $mode)" \
	|| fail record_file_mode_existing "overwritten trace file has mode ${mode:-none}, want 600"

# a 256 KiB tmpfs: the head and one chunk of events fit, the next does not
FULL=$(mktemp -d "$TMP/full.XXXXXX")
if ! mount -t tmpfs -o size=256k iotrail-full "$FULL"; then
	fail record_enospc "cannot mount a 256 KiB tmpfs on $FULL"
	exit 1
fi
nios=30000
"$IOTRAIL" record -o "$FULL/x.trail" --layers block --dev "$LOOPNAME" \
	-- $(fio_cmd "$TMP/fio.json" $nios) > "$TMP/full.out" 2> "$TMP/full.err"
rc=$?
fio_ios=$(jq '.jobs[0].read.total_ios' "$TMP/fio.json" 2>/dev/null)
fio_err=$(jq '.jobs[0].error' "$TMP/fio.json" 2>/dev/null)
r=$(jq_report "$FULL/x.trail" '"\(.ios) \(.truncated) \(.truncated_reason)"' 2>&1)
size=$(stat -c %s "$FULL/x.trail" 2>/dev/null)
set -- $r
err=$(cat "$TMP/full.err")
if [ $rc -ne 1 ]; then
	fail record_enospc "exit status $rc, want 1: $err"
elif [ "$(wc -l < "$TMP/full.err")" -ne 1 ]; then
	fail record_enospc "$(wc -l < "$TMP/full.err") lines on stderr, want 1: $(head -3 "$TMP/full.err" | tr '\n' '|')"
elif ! echo "$err" | grep -q 'No space left on device' || ! echo "$err" | grep -q 'keeps its first' \
	|| ! echo "$err" | grep -q 'record elsewhere with -o'; then
	fail record_enospc "the line does not say ENOSPC, what was kept and what to do: $err"
elif [ "$fio_ios" != "$nios" ] || [ "$fio_err" != 0 ]; then
	fail record_enospc "fio was disturbed: $fio_ios of $nios I/Os, error ${fio_err:-?}"
elif ! [ "${1:-0}" -gt 0 ] 2>/dev/null || [ "$2" != true ] || ! echo "$r" | grep -q "ends at offset $size without an END chunk"; then
	fail record_enospc "the file ($size bytes) does not read up to a chunk boundary: $r"
else
	pass "record_enospc ($1 I/Os kept in $size bytes, fio did all $nios; $err)"
fi
exit ${FAILED:-0}
