#!/usr/bin/env bash
# Zoned namespace (run --zns: 64 zones of 16 MiB, 4 KiB LBAs), one boot:
# under `iotrail record`, a script resets chosen zones a known number of
# times (blkzone reset -c 1), writes known amounts at known zone starts
# (dd oflag=direct), reads a known amount, finishes, opens and closes
# chosen zones. `iotrail report --zones --json` must give exactly those
# counts per zone and nothing on the other zones; the text heat map must
# have one cell per zone; `report --stats 'distinct(zone)'` by op the
# zones each op touched.
# In the same boot, `iotrail extents` on F2FS over a zoned null_blk (8
# conventional zones for its metadata, 248 sequential ones of 4 MiB): six
# 1 MiB files, every extent inside the capacity of a sequential zone of
# the zone table, the zones' bytes the files'; then half the files of the
# first full zone deleted and F2FS's foreground GC forced
# (F2FS_IOC_GARBAGE_COLLECT, build/tests/f2fs_gc): the other half moved
# to another zone, their contents unchanged (md5sum after dropping caches,
# against the host's own of the same bytes). The GC runs under `iotrail
# record --layers fs --extents`: its report says f2 and f4 moved whole
# (1 MiB each, nothing new), from the zones `iotrail extents` saw them in
# before to those it sees after, sequential zones of the table.
# The same recording has F2FS's tracepoints (--extents on an F2FS mount):
# one foreground GC round per F2FS_IOC_GARBAGE_COLLECT f2fs_gc made (ret
# 0 for those that collected, as f2fs_gc counted them), and the page
# writes of those rounds name f2 and f4, 1 MiB each, moved from the zone
# `iotrail extents` saw them in before to the one it sees after; the
# checkpoints the syncs and the GC wrote, each closed; the text report's
# lines fit 100 columns. `iotrail probe --layer fs` in the same boot
# (after the recording attached them): F2FS's five tracepoints usable.
# Then a background GC round (the ioctl's sync 0: it only marks the data
# to move, the sync after it writes it): four more files, two deleted;
# the files whose zone changed are those the trace says the background
# round moved, from and to the same zones, written back after the round.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

names="vm_zones_table vm_zones_resets vm_zones_writes vm_zones_reads vm_zones_mgmt
       vm_zones_quiet vm_zones_heatmap vm_zones_distinct vm_zones_nvme_zone_cmds"
vm_skip_unless jq blkzone -- $names

ZS=32768 # zone size in 512-byte sectors (16 MiB)
out=$TMP/out
mkdir -p "$out"
# zone 3: 2 resets; zone 10: 1 reset; zone 5: 8 x 64 KiB writes then 1
# reset; zone 7: 3 x 128 KiB writes, then 5 x 4 KiB reads; zone 9: finish;
# zone 11: open + close.
cat > "$out/work.sh" <<GUEST
set -e
d=/dev/nvme0n1
blkzone reset -o $((3 * ZS)) -c 1 \$d
blkzone reset -o $((3 * ZS)) -c 1 \$d
blkzone reset -o $((10 * ZS)) -c 1 \$d
dd if=/dev/zero of=\$d bs=64k count=8 seek=$((5 * 256)) oflag=direct status=none
dd if=/dev/zero of=\$d bs=128k count=3 seek=$((7 * 128)) oflag=direct status=none
dd if=\$d of=/dev/null bs=4k count=5 skip=$((7 * 4096)) iflag=direct status=none
blkzone reset -o $((5 * ZS)) -c 1 \$d
blkzone finish -o $((9 * ZS)) -c 1 \$d
blkzone open -o $((11 * ZS)) -c 1 \$d
blkzone close -o $((11 * ZS)) -c 1 \$d
GUEST
cat > "$TMP/zones.sh" <<GUEST
build/iotrail record --layers block -o $out/zns.trail --dev nvme0n1 -- sh $out/work.sh
build/iotrail report --zones --json $out/zns.trail > $out/zns.json
build/iotrail report --zones $out/zns.trail > $out/zns.txt
GUEST
f2fs_names="vm_extents_f2fs_zones vm_extents_f2fs_gc vm_record_extents_f2fs_gc vm_extents_f2fs_segment_types
	    vm_record_f2fs_gc_rounds vm_record_f2fs_gc_moves vm_record_f2fs_checkpoints vm_probe_f2fs
	    vm_record_f2fs_bg_gc_moves"
f2fs_why=""
command -v mkfs.f2fs > /dev/null || f2fs_why="mkfs.f2fs is not installed (f2fs-tools; scripts/install-deps.sh)"
[ -x build/tests/f2fs_gc ] || f2fs_why=${f2fs_why:-"build/tests/f2fs_gc is not built (make)"}
f2fs_vm=()
if [ -z "$f2fs_why" ]; then
	f2fs_vm=(--modules crc32_generic,f2fs,null_blk:nr_devices=1:zoned=1:zone_nr_conv=8:zone_size=4:gb=1:memory_backed=1)
	# written by the shell itself (each process costs ~0.5 s under TCG):
	# 1 MiB of spaces then the file's number, so the contents differ and
	# the host knows them (expected_md5)
	cat >> "$TMP/zones.sh" <<GUEST
(
set -e
read -r t0 _ < /proc/uptime
mkfs.f2fs -q -f -m /dev/nullb0
mkdir -p /tmp/f2fs
mount -t f2fs /dev/nullb0 /tmp/f2fs
pad=\$(printf '%1048570s' '')
for i in 1 2 3 4 5 6; do printf '%s%6d' "\$pad" \$i > /tmp/f2fs/f\$i; done
sync
build/iotrail extents --json /tmp/f2fs > $out/f2fs.before.json
rm /tmp/f2fs/f1 /tmp/f2fs/f3
read -r r0 _ < /proc/uptime
build/iotrail record --layers fs --extents /tmp/f2fs -o $out/f2fs.trail -- build/tests/f2fs_gc /tmp/f2fs 4 > $out/f2fs.gc
read -r r1 _ < /proc/uptime
echo "\$r0 \$r1" > $out/f2fs.rectime
echo 3 > /proc/sys/vm/drop_caches
md5sum /tmp/f2fs/f2 /tmp/f2fs/f4 > $out/f2fs.md5.after
build/iotrail extents --json /tmp/f2fs > $out/f2fs.after.json
read -r t1 _ < /proc/uptime
echo "\$t0 \$t1" > $out/f2fs.time
read -r p0 _ < /proc/uptime
build/iotrail probe --layer fs --json > $out/probe.fs.json
read -r p1 _ < /proc/uptime
echo "\$p0 \$p1" > $out/probe.time
# a background round: four more files, two of them deleted; the round
# marks the rest of its victim's data, the sync after it moves them
for i in 7 8 9 10; do printf '%s%6d' "\$pad" \$i > /tmp/f2fs/f\$i; done
sync
build/iotrail extents --json /tmp/f2fs > $out/f2fs.bg.before.json
rm /tmp/f2fs/f7 /tmp/f2fs/f9
build/iotrail record --layers fs --extents /tmp/f2fs -o $out/f2fs.bg.trail -- build/tests/f2fs_gc --background /tmp/f2fs 1 > $out/f2fs.bg.gc
build/iotrail extents --json /tmp/f2fs > $out/f2fs.bg.after.json
) > $out/f2fs.log 2>&1
GUEST
fi
vm vm_zones --zns "${f2fs_vm[@]}" --out "$out" -- bash "$TMP/zones.sh"
J=$out/zns.json
if [ ! -s "$J" ]; then
	for n in $names; do fail "$n" "no report from the guest ($(vm_why vm_zones))"; done
	exit 1
fi

nz=$(jq -r '[.zones[] | select(.dev == "nvme0n1")] | length' "$J")
z5lba=$(jq -r '.zones[5].start_lba' "$J")
if [ "$nz" = 64 ] && [ "$z5lba" = $((5 * ZS / 8)) ]; then
	pass "vm_zones_table (64 zones from BLKREPORTZONE; zone 5 starts at LBA $z5lba)"
else
	fail vm_zones_table "$nz zones (want 64), zone 5 start_lba $z5lba (want $((5 * ZS / 8)))"
fi

# zone field: value
z() { jq -r ".zones[$1].$2" "$J"; }
check() { # name, then "zone field want" triples
	local name=$1 msg="" bad=""
	shift
	while [ $# -ge 3 ]; do
		local got
		got=$(z "$1" "$2")
		msg="$msg zone$1.$2=$got"
		[ "$got" = "$3" ] || bad="$bad zone $1 $2=$got (want $3);"
		shift 3
	done
	if [ -z "$bad" ]; then pass "$name ($msg )"; else fail "$name" "$bad"; fi
}
check vm_zones_resets 3 resets 2 10 resets 1 5 resets 1 3 reset_latency_ns.count 2
check vm_zones_writes 5 writes 8 5 write_bytes 524288 7 writes 3 7 write_bytes 393216
check vm_zones_reads 7 reads 5 7 read_bytes 20480
check vm_zones_mgmt 9 finishes 1 11 opens 1 11 closes 1

others=$(jq -r '[.zones[] | select(.zone | IN(3,5,7,9,10,11) | not)
	| .writes + .appends + .resets + .finishes + .opens + .closes] | add' "$J")
if [ "$others" = 0 ]; then
	pass "vm_zones_quiet (no write, append or zone command on the 58 other zones)"
else
	fail vm_zones_quiet "$others writes/zone commands on zones not touched"
fi

# the resets heat map row: one cell per zone, digits at zones 3, 5, 10
row=$(grep -A2 '^  resets' "$out/zns.txt" | sed -n 3p | sed 's/^ *0 |//; s/|$//')
if [ "${#row}" = 64 ] && [ "${row:3:1}" = 2 ] && [ "${row:5:1}" = 1 ] && [ "${row:10:1}" = 1 ]; then
	pass "vm_zones_heatmap (resets row: '$row')"
else
	fail vm_zones_heatmap "resets row '$row' (${#row} cells, want 64 with 2 at 3, 1 at 5 and 10)"
fi

# distinct(zone) per op, on the host from the guest's trace: writes in
# zones 5 and 7, reads in 7, resets of 3 (twice), 10 and 5
build/iotrail report --json --group-by op --stats 'distinct(zone)' "$out/zns.trail" \
	> "$TMP/distinct.json" 2> "$TMP/distinct.err"
dz=$(jq -r '[.groups[] | select(.key.op | IN("write", "read", "zone-reset"))
	| "\(.key.op)=\(.distinct_zones)"] | sort | join(" ")' "$TMP/distinct.json" 2> /dev/null)
if [ "$dz" = "read=1 write=2 zone-reset=3" ]; then
	pass "vm_zones_distinct (distinct(zone) by op: $dz)"
else
	fail vm_zones_distinct "distinct(zone) by op: '$dz', want 'read=1 write=2 zone-reset=3' $(head -c 200 "$TMP/distinct.err")"
fi

zsend=$(jq -r '.nvme.by_opcode.zone_mgmt_send.count // 0' "$J")
if [ "$zsend" = 7 ]; then
	pass "vm_zones_nvme_zone_cmds (7 NVMe zone management send commands: 4 resets, finish, open, close)"
else
	fail vm_zones_nvme_zone_cmds "$zsend zone management send commands, want 7"
fi

f2fs_checks() {
	local B=$out/f2fs.before.json A=$out/f2fs.after.json
	if [ ! -s "$B" ] || [ ! -s "$A" ]; then
		for n in $f2fs_names; do fail "$n" "no extents from the guest: $(tail -n2 "$out/f2fs.log" 2>/dev/null | tr '\n' ' ')"; done
		return
	fi
	# every extent inside the capacity of a sequential zone of the table
	local bad nfiles fbytes zbytes
	bad=$(jq '. as $r | [.files[].extents[] | . as $e | ($r.zones[] | select(.zone == $e.zone)) as $z
		| select($z.type != "seq_write_required" or $e.physical < $z.start
			 or $e.physical + $e.length > $z.start + $z.capacity)] | length' "$B")
	nfiles=$(jq '.files | length' "$B")
	fbytes=$(jq '[.files[].data_bytes] | add' "$B")
	zbytes=$(jq '[.zones[].data_bytes] | add' "$B")
	if [ "$(jq '.devices[0].zoned' "$B")" = true ] && [ "$nfiles" = 6 ] && [ "$bad" = 0 ] \
		&& [ "$(jq '[.files[].extents[] | select(.zone == null)] | length' "$B")" = 0 ] \
		&& [ "$fbytes" = "$zbytes" ] && [ "$fbytes" = $((6 << 20)) ]; then
		pass "vm_extents_f2fs_zones (6 files, $(jq '.zones | length' "$B") sequential zones with data, every extent inside one)"
	else
		fail vm_extents_f2fs_zones "files $nfiles, extents outside a sequential zone $bad, files' bytes $fbytes, zones' $zbytes"
	fi
	# F2FS's segment types (segment_info and the superblock): every file
	# extent in a data segment, before and after the GC
	local types_b types_a notdata
	notdata=$(jq -s '[.[].files[].extents[] | select((.segment_type // "none") | test("_data$") | not)] | length' "$B" "$A")
	types_b=$(jq -r '[.files[].extents[].segment_type] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$B")
	types_a=$(jq -r '[.files[].extents[].segment_type] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$A")
	# F2FS's GC writes the data it moves as cold (set_cold_data in
	# move_data_page): f2 and f4, warm before, are cold after
	local gc_cold
	gc_cold=$(jq -r '[.files[] | select(.path == "/tmp/f2fs/f2" or .path == "/tmp/f2fs/f4") | .extents[].segment_type] | unique | join(",")' "$A")
	if [ "$notdata" = 0 ] && [ "$types_b" = "warm_data 6" ] && [ "$gc_cold" = cold_data ]; then
		pass "vm_extents_f2fs_segment_types (every extent in a data segment; before the GC: $types_b; after: $types_a, f2 and f4 moved by it cold)"
	else
		fail vm_extents_f2fs_segment_types "$notdata extents without a data segment type; before: $types_b (want warm_data 6); after: $types_a; f2 and f4 after: $gc_cold (want cold_data)"
	fi
	# the kept files: one zone before, another after; contents unchanged
	local moved=0 zb za f
	for f in f2 f4; do
		zb=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$B")
		za=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$A")
		[ -n "$za" ] && [ "$za" != "$zb" ] && moved=$((moved + 1))
	done
	local want got
	want=$(for i in 2 4; do printf '%1048570s%6d' '' $i | md5sum | sed "s|-\$|/tmp/f2fs/f$i|"; done)
	got=$(cat "$out/f2fs.md5.after" 2>/dev/null)
	if [ "$moved" = 2 ] && [ "$(cat "$out/f2fs.gc")" -ge 1 ] && [ "$got" = "$want" ]; then
		pass "vm_extents_f2fs_gc ($(cat "$out/f2fs.gc") GC round moved f2 and f4 from zone $zb to zone $za, contents unchanged; the F2FS part took $(awk '{ printf "%.1f", $2 - $1 }' "$out/f2fs.time") s in the guest)"
	else
		fail vm_extents_f2fs_gc "$moved of 2 files moved zone (last: $zb -> $za); GC rounds $(cat "$out/f2fs.gc" 2>/dev/null); md5 $got, want $want"
	fi
	# record --extents around the GC: the same move, from the trace alone
	local R=$TMP/f2fs.report.json ok=0 why="" line
	if ! build/iotrail report --json "$out/f2fs.trail" > "$R" 2> "$TMP/f2fs.report.err"; then
		for n in vm_record_extents_f2fs_gc vm_record_f2fs_gc_rounds vm_record_f2fs_gc_moves vm_record_f2fs_checkpoints; do
			fail $n "no report of the guest's trace: $(head -c 300 "$TMP/f2fs.report.err")"
		done
		return
	fi
	for f in f2 f4; do
		zb=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$B")
		za=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$A")
		line=$(jq -r --arg p "/tmp/f2fs/$f" '.extents.files[] | select(.path == $p) |
			"\(.state) \(.moved_bytes) \(.new_bytes) \([.extents_start[].zone] | unique | join(",")) \([.zones[].zone] | unique | join(","))"' "$R")
		seq=$(jq --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] as $z |
			[.zones[] | select(.zone as $n | $z | index($n)) | .type == "seq_write_required"] | all' "$A")
		if [ "$line" = "changed 1048576 0 $zb $za" ] && [ "$seq" = true ]; then
			ok=$((ok + 1))
		else
			why="$why $f: '$line' (want 'changed 1048576 0 $zb $za', sequential: $seq);"
		fi
	done
	f2fs_event_checks "$R"
	[ "$ok" = 2 ] && pass "vm_record_extents_f2fs_gc (f2 and f4 moved whole, 1 MiB each, from zone $zb to zone $za: the trace's snapshots agree with iotrail extents before and after; the recorded GC took $(awk '{ printf "%.1f", $2 - $1 }' "$out/f2fs.rectime") s in the guest)" \
		|| fail vm_record_extents_f2fs_gc "$why"
}
# F2FS's tracepoints in the recorded GC's trace (report JSON R): rounds,
# the blocks they moved by file and zone, checkpoints
f2fs_event_checks() {
	local R=$1 B=$out/f2fs.before.json A=$out/f2fs.after.json
	local done tried fg ok0 got want why="" f zb za
	done=$(cat "$out/f2fs.gc")
	tried=$(( done < 4 ? done + 1 : 4 )) # f2fs_gc stops at the first round without a victim
	fg=$(jq '[.f2fs.gc_rounds[]? | select(.foreground)] | length' "$R")
	ok0=$(jq '[.f2fs.gc_rounds[]? | select(.foreground and .ret == 0 and .duration_ns > 0)] | length' "$R")
	if [ "$fg" = "$tried" ] && [ "$ok0" = "$done" ]; then
		pass "vm_record_f2fs_gc_rounds ($fg foreground GC rounds for $tried ioctls, $ok0 collected as f2fs_gc counted; took $(jq -r '[.f2fs.gc_rounds[] | select(.foreground) | "\(.duration_ns / 1e6 | floor) ms"] | join(", ")' "$R"))"
	else
		fail vm_record_f2fs_gc_rounds "$fg foreground rounds (want $tried, one per ioctl), $ok0 with ret 0 and a duration (want $done): $(jq -c '[.f2fs.gc_rounds[]? | {foreground, ret, duration_ns}]' "$R" | head -c 400)"
	fi
	for f in f2 f4; do
		zb=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$B")
		za=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$A")
		got=$(jq -r --arg p "/tmp/f2fs/$f" '[.f2fs.gc_rounds[]? | .moved[] | select(.path == $p)] |
			"\([.[].bytes] | add) \([.[].from_zone] | unique | join(",")) \([.[].to_zone] | unique | join(","))"' "$R")
		want="1048576 $zb $za"
		[ "$got" = "$want" ] || why="$why $f: '$got' (want '$want');"
	done
	local width
	width=$(build/iotrail report "$out/f2fs.trail" 2>/dev/null | awk '{ if (length > w) w = length } END { print w + 0 }')
	if [ -z "$why" ] && build/iotrail report "$out/f2fs.trail" 2>/dev/null | grep -q "moved /tmp/f2fs/f2 1M: zone $zb -> zone $za" \
		&& [ "$width" -le 100 ]; then
		pass "vm_record_f2fs_gc_moves (the GC rounds' page writes: f2 and f4 moved 1 MiB each from zone $zb to zone $za, as iotrail extents saw them before and after; the text report's widest line $width columns)"
	else
		fail vm_record_f2fs_gc_moves "${why:-the text report lacks 'moved /tmp/f2fs/f2 1M: zone $zb -> zone $za' or is $width columns wide}"
	fi
	local ncp open lost
	ncp=$(jq '.f2fs.checkpoints | length' "$R")
	open=$(jq '[.f2fs.checkpoints[] | select(.duration_ns == null)] | length' "$R")
	lost=$(jq '.f2fs.lost' "$R")
	if [ "${ncp:-0}" -ge 1 ] && [ "$open" = 0 ] && [ "$lost" = 0 ]; then
		pass "vm_record_f2fs_checkpoints ($ncp checkpoints, each from start block_ops to finish checkpoint ($(jq -r '[.f2fs.checkpoints[] | "\(.reason) \(.duration_ns / 1e6 | floor) ms"] | join(", ")' "$R")); 0 events lost)"
	else
		fail vm_record_f2fs_checkpoints "$ncp checkpoints (want >= 1), $open without their end, $lost events lost"
	fi
}
# A background round writes no data itself: the files whose zone changed
# across it (iotrail extents before and after) are those its round moved
# in the trace, whole, between the same zones, and no other file; every
# block of it written back after the round (by the sync that followed),
# each one a block of these files
f2fs_bg_check() {
	local R=$TMP/f2fs.bg.report.json B=$out/f2fs.bg.before.json A=$out/f2fs.bg.after.json
	local f zb za got moved="" why="" later data bytes
	if ! build/iotrail report --json "$out/f2fs.bg.trail" > "$R" 2> "$TMP/f2fs.bg.err"; then
		fail vm_record_f2fs_bg_gc_moves "no report of the background GC's trace: $(head -c 300 "$TMP/f2fs.bg.err"); guest: $(tail -n2 "$out/f2fs.log" | tr '\n' ' ')"
		return
	fi
	for f in f2 f4 f5 f6 f8 f10; do
		zb=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$B")
		za=$(jq -r --arg p "/tmp/f2fs/$f" '[.files[] | select(.path == $p) | .extents[].zone] | unique | join(",")' "$A")
		got=$(jq -r --arg p "/tmp/f2fs/$f" '[.f2fs.gc_rounds[]? | select(.foreground | not) | .moved[] | select(.path == $p)] |
			"\([.[].bytes] | add // 0) \([.[].from_zone] | unique | join(",")) \([.[].to_zone] | unique | join(","))"' "$R")
		if [ -n "$za" ] && [ "$za" != "$zb" ]; then
			moved="$moved $f"
			[ "$got" = "1048576 $zb $za" ] || why="$why $f moved from zone $zb to $za, the trace: '$got';"
		else
			[ "$got" = "0  " ] || why="$why $f stayed in zone $zb, the trace moved it: '$got';"
		fi
	done
	later=$(jq '[.f2fs.gc_rounds[]? | select(.foreground | not) | .data_blocks_written_back_later] | add // 0' "$R")
	data=$(jq '[.f2fs.gc_rounds[]? | select(.foreground | not) | .data_blocks] | add // 0' "$R")
	bytes=$(jq '[.f2fs.gc_rounds[]? | select(.foreground | not) | .moved[].bytes] | add // 0' "$R")
	if [ -z "$why" ] && [ -n "$moved" ] && [ "$later" -gt 0 ] && [ "$later" = "$data" ] &&
	   [ "$bytes" = $((later * 4096)) ]; then
		pass "vm_record_f2fs_bg_gc_moves (a background GC round (ioctl sync 0) moved$moved, 1 MiB each, between the zones iotrail extents saw before and after, and no other file; its $later data blocks all written back after the round, all of them these files')"
	else
		fail vm_record_f2fs_bg_gc_moves "${why:-no file moved zone ($moved)}; background rounds' data blocks $data, written back later $later, moved bytes $bytes; rounds $(jq -c '[.f2fs.gc_rounds[]? | {foreground, ret, data_blocks, data_blocks_written_back_later}]' "$R" | head -c 300); f2fs_gc: $(cat "$out/f2fs.bg.gc" 2>/dev/null)"
	fi
}
# the recording attached the five tracepoints (its F2FS events): probe
# must call each usable
probe_f2fs_check() {
	local P=$out/probe.fs.json hooks
	hooks=$(jq -r '[.layers[] | select(.name == "fs") | .hooks[] | "\(.name)=\(.hook)"] | join(" ")' "$P" 2>/dev/null)
	if [ -z "$hooks" ]; then
		fail vm_probe_f2fs "no probe output from the guest: $(tail -n2 "$out/f2fs.log" 2>/dev/null | tr '\n' ' ')"
	elif [ "$(jq '.f2fs.gc_rounds | length' "$TMP/f2fs.report.json" 2>/dev/null)" -ge 1 ] 2>/dev/null &&
	     [ "$(echo "$hooks" | tr ' ' '\n' | grep -c '=\(tp_btf\|raw_tp\|tracepoint\)$')" = 5 ]; then
		pass "vm_probe_f2fs (the recording had F2FS's events; probe --layer fs: $hooks; took $(awk '{ printf "%.1f", $2 - $1 }' "$out/probe.time") s in the guest)"
	else
		fail vm_probe_f2fs "probe --layer fs: $hooks; the recording's GC rounds: $(jq '.f2fs.gc_rounds | length' "$TMP/f2fs.report.json" 2>/dev/null)"
	fi
}
if [ -n "$f2fs_why" ]; then
	for n in $f2fs_names; do skip "$n" "$f2fs_why"; done
else
	f2fs_checks
	probe_f2fs_check
	f2fs_bg_check
fi
exit $FAILED
