#!/usr/bin/env bash
# `iotrail extents` against filefrag, on ext4 (4K blocks) over a loop device:
#   - two files written in turns, 4K at a time, mounted without delayed
#     allocation, so their blocks interleave (fragmented on purpose), and a
#     sparse file (data at 1M and 3M of a 5M file): every file's extents
#     (logical, physical, length) equal filefrag -e's exactly; the
#     interleaved files have more than one run; the sparse file's three
#     holes are reported with their bytes;
#   - regions (--region 1M): each extent's region is physical / 1M, the
#     regions' data adds up to the files', each file is listed in them;
#   - the walk: a FIFO and a symbolic link are counted as not regular
#     files (not followed); a directory is walked recursively;
#   - bad input: a missing path, a file on tmpfs (no FIEMAP) and a bad
#     --region are one line on stderr with exit 1, 1 and 2;
#   - record --extents (fs layer only, no BPF): a file appended during the
#     recording (256K, fsync'd) and one created: the end snapshot's
#     extents equal filefrag -e's after the run, the start snapshot's
#     those before it; the appended file has exactly 256K of new data, in
#     regions that add up to it; the created file is "created"; a missing
#     --extents PATH, a bad --extents-region and --extents without the fs
#     layer are one line each (exit 1, 2, 2).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

bad_input() {
	local err=$TMP/bad.err rc shm
	"$IOTRAIL" extents "$TMP/missing" > /dev/null 2> "$err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l < "$err")" -eq 1 ] && grep -q "failed to read $TMP/missing" "$err" \
		|| { fail extents_bad_input "missing path: exit $rc: $(cat "$err")"; return; }
	shm=$(mktemp /dev/shm/iotrail-it.${RUNTAG}XXXXXX)
	echo data > "$shm"
	"$IOTRAIL" extents "$shm" > /dev/null 2> "$err"
	rc=$?
	rm -f "$shm"
	[ "$rc" -eq 1 ] && [ "$(wc -l < "$err")" -eq 1 ] && grep -q "no FIEMAP" "$err" \
		|| { fail extents_bad_input "tmpfs file: exit $rc: $(cat "$err")"; return; }
	"$IOTRAIL" extents --region 12X . > /dev/null 2> "$err"
	rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l < "$err")" -eq 1 ] \
		|| { fail extents_bad_input "--region 12X: exit $rc: $(cat "$err")"; return; }
	pass "extents_bad_input (missing path, tmpfs file: exit 1; bad --region: exit 2; one line each)"
}

[ -x "$IOTRAIL" ] && bad_input
why=$(host_blocker)
command -v mkfs.ext4 > /dev/null || why=${why:-"mkfs.ext4 is not installed (e2fsprogs)"}
command -v filefrag > /dev/null || why=${why:-"filefrag is not installed (e2fsprogs)"}
if [ -n "$why" ]; then
	for t in extents_filefrag extents_sparse_holes extents_regions extents_walk; do skip $t "$why"; done
	exit 0
fi
make_loop 64 none || { fail extents_filefrag "cannot set up a loop device"; exit 1; }
mkfs.ext4 -q -F -b 4096 "$LOOPDEV" || { fail extents_filefrag "mkfs.ext4 failed on $LOOPDEV"; exit 1; }
MNT=$TMP/mnt
mkdir -p "$MNT"
mount -o nodelalloc "$LOOPDEV" "$MNT" || { fail extents_filefrag "cannot mount ext4 on $LOOPDEV"; exit 1; }
trap 'umount "$MNT" 2>/dev/null; cleanup' EXIT

mkdir -p "$MNT/d/sub"
# without delayed allocation each write takes its blocks at once: 4K
# written to a and b in turns (the shell's own writes, no process each)
block=$(printf '%4096s' '')
exec 3>> "$MNT/d/a" 4>> "$MNT/d/sub/b"
for i in $(seq 16); do
	printf '%s' "$block" >&3
	printf '%s' "$block" >&4
done
exec 3>&- 4>&-
dd if=/dev/urandom of="$MNT/d/sparse" bs=4k count=2 seek=256 conv=notrunc status=none
dd if=/dev/urandom of="$MNT/d/sparse" bs=4k count=1 seek=768 conv=notrunc status=none
truncate -s 5M "$MNT/d/sparse"
sync -f "$MNT/d/sparse"
mkfifo "$MNT/d/fifo"
ln -s a "$MNT/d/link"

out=$TMP/ext.json
"$IOTRAIL" extents --json --region 1M "$MNT/d" > "$out" 2> "$TMP/ext.err" \
	|| { fail extents_filefrag "iotrail extents failed: $(cat "$TMP/ext.err")"; exit 1; }

# filefrag -e's extents of $1 as "logical physical length" in bytes
filefrag_bytes() {
	filefrag -e "$1" | awk '
		/^File size of/ { bs = $(NF-1) }
		/^ *[0-9]+:/ { gsub(/\.\./, " "); gsub(/:/, " "); $0 = $0
			print $2 * bs, $4 * bs, $6 * bs }'
}
ours() {
	jq -r --arg p "$1" '.files[] | select(.path == $p) | .extents[] |
		"\(.logical) \(.physical) \(.length)"' "$out"
}

bad=""
n=0
for f in a sub/b sparse; do
	want=$(filefrag_bytes "$MNT/d/$f")
	got=$(ours "$MNT/d/$f")
	[ -n "$want" ] && [ "$got" = "$want" ] || bad="$bad $f (ours: $(echo $got), filefrag: $(echo $want))"
	n=$((n + $(echo "$want" | wc -l)))
done
runs_a=$(jq --arg p "$MNT/d/a" '.files[] | select(.path == $p) | .runs' "$out")
runs_b=$(jq --arg p "$MNT/d/sub/b" '.files[] | select(.path == $p) | .runs' "$out")
if [ -n "$bad" ]; then
	fail extents_filefrag "extents differ from filefrag -e:$bad"
elif [ "${runs_a:-0}" -lt 2 ] || [ "${runs_b:-0}" -lt 2 ]; then
	fail extents_filefrag "the interleaved files came out contiguous (runs $runs_a, $runs_b): nothing tested"
else
	pass "extents_filefrag ($n extents of 3 files equal filefrag -e's; interleaved files in $runs_a and $runs_b runs)"
fi

holes=$(jq -r --arg p "$MNT/d/sparse" '.files[] | select(.path == $p) | "\(.holes) \(.hole_bytes)"' "$out")
# holes: [0, 1M), [1M+8K, 3M), [3M+4K, 5M)
want_holes="3 $(( (1 << 20) + (2 << 20) - 8192 + (2 << 20) - 4096 ))"
[ "$holes" = "$want_holes" ] && pass "extents_sparse_holes (3 holes, $((${holes#* } / 1024)) KiB)" \
	|| fail extents_sparse_holes "holes and bytes: got '$holes', want '$want_holes'"

# every extent in region physical / 1M; the regions' data the files' data;
# each file named in the regions it has data in
wrong=$(jq '[.files[].extents[] | select(.zone != ((.physical / 1048576) | floor))] | length' "$out")
fbytes=$(jq '[.files[].data_bytes] | add' "$out")
zbytes=$(jq '[.zones[].data_bytes] | add' "$out")
named=$(jq '. as $r | [.files[] | .path as $p | .zone_count as $n |
	([$r.zones[] | select(any(.files[]; .path == $p))] | length) == $n] | all' "$out")
nz=$(jq '.zones | length' "$out")
if [ "$wrong" = 0 ] && [ "$fbytes" = "$zbytes" ] && [ "$named" = true ] && [ "$nz" -ge 1 ]; then
	pass "extents_regions ($nz regions of 1M with data; $zbytes bytes in both views; every file named in its regions)"
else
	fail extents_regions "extents in the wrong region: $wrong; files' bytes $fbytes, regions' $zbytes; files named: $named"
fi

walk=$(jq -r '.walk | "\(.files) \(.directories) \(.not_regular) \(.vanished) \(.unreadable)"' "$out")
[ "$walk" = "3 2 2 0 0" ] && pass "extents_walk (3 files in 2 directories; the FIFO and the link not followed)" \
	|| fail extents_walk "files, directories, not regular, vanished, unreadable: got '$walk', want '3 2 2 0 0'"

# ---- record --extents: snapshots at the start and the end of a recording ----
mkdir -p "$MNT/r"
dd if=/dev/urandom of="$MNT/r/app" bs=64k count=1 conv=fsync status=none
dd if=/dev/urandom of="$MNT/r/old" bs=16k count=1 conv=fsync status=none
before=$(filefrag_bytes "$MNT/r/app")
trail=$TMP/ext.trail
"$IOTRAIL" record --layers fs --extents "$MNT/r" --extents-region 1M -o "$trail" -- \
	sh -c "dd if=/dev/urandom of='$MNT/r/app' bs=64k count=4 oflag=append conv=notrunc,fsync status=none &&
	       dd if=/dev/urandom of='$MNT/r/new' bs=8k count=1 conv=fsync status=none" \
	> "$TMP/rec.out" 2> "$TMP/rec.err" \
	|| { fail extents_record "iotrail record --extents failed: $(cat "$TMP/rec.err")"; exit 1; }
"$IOTRAIL" report --json "$trail" > "$TMP/rep.json" 2> "$TMP/rep.err" \
	|| { fail extents_record "iotrail report failed: $(cat "$TMP/rep.err")"; exit 1; }
file_json() { jq -c --arg p "$MNT/r/$1" '.extents.files[] | select(.path == $p)' "$TMP/rep.json"; }
ext_lines() { file_json "$1" | jq -r ".$2[] | \"\(.logical) \(.physical) \(.length)\""; }
after=$(filefrag_bytes "$MNT/r/app")
app=$(file_json app)
got_end=$(ext_lines app extents_end)
got_start=$(ext_lines app extents_start)
new=$(echo "$app" | jq '.new_bytes')
zsum=$(echo "$app" | jq '[.zones[].bytes] | add // 0')
state_new=$(file_json new | jq -r '.state')
state_old=$(file_json old | jq -r '.state')
if [ -z "$after" ] || [ "$got_end" != "$after" ]; then
	fail extents_record "the end snapshot of app differs from filefrag -e after the run: ours $(echo $got_end), filefrag $(echo $after)"
elif [ "$got_start" != "$before" ]; then
	fail extents_record "the start snapshot of app differs from filefrag -e before the run: ours $(echo $got_start), filefrag $(echo $before)"
elif [ "$new" != $((256 * 1024)) ] || [ "$zsum" != "$new" ]; then
	fail extents_record "app: new bytes $new (want 262144), in its regions $zsum"
elif [ "$state_new" != created ] || [ "$state_old" != same ]; then
	fail extents_record "states: new is '$state_new' (want created), old '$state_old' (want same)"
else
	pass "extents_record (appended file: $(echo "$after" | wc -l) end extents equal filefrag -e's, 256K new in $(echo "$app" | jq '.zones | length') regions; created and unchanged files told)"
fi
# bad input: one line each; a missing PATH exit 1, a bad size and
# --extents without the fs layer exit 2 (option errors)
record_bad() { # WANT_RC GREP ARGS...
	local want=$1 pat=$2 rc
	shift 2
	"$IOTRAIL" record "$@" -o "$TMP/bad.trail" -- true > /dev/null 2> "$TMP/bad.err"
	rc=$?
	[ "$rc" -eq "$want" ] && [ "$(wc -l < "$TMP/bad.err")" -eq 1 ] && grep -q -- "$pat" "$TMP/bad.err" \
		|| { echo "$*: exit $rc (want $want): $(cat "$TMP/bad.err")"; return 1; }
}
if out=$(record_bad 1 "failed to read --extents $TMP/missing" --layers fs --extents "$TMP/missing" &&
	 record_bad 2 "failed to use --extents-region 12X" --layers fs --extents "$MNT/r" --extents-region 12X &&
	 record_bad 2 "needs the fs layer" --layers block --extents "$MNT/r" &&
	 record_bad 2 "--f2fs needs the fs layer" --layers block --f2fs &&
	 { grep -qw f2fs /proc/filesystems ||
	   record_bad 1 "this kernel has no F2FS" --layers fs --f2fs; }); then
	nof2fs="--f2fs on this kernel without F2FS: exit 1; "
	grep -qw f2fs /proc/filesystems && nof2fs="(this kernel has F2FS: --f2fs not refused); "
	pass "extents_record_bad_input (missing PATH: exit 1; bad --extents-region, no fs layer (--extents, --f2fs): exit 2; $nof2fs""one line each)"
else
	fail extents_record_bad_input "$out"
fi
exit ${FAILED:-0}
