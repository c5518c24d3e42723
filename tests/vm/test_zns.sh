#!/usr/bin/env bash
# The zoned namespace (run --zns): /dev/nvme0n1 is host-managed with
# 1 GiB / 16 MiB = 64 zones, blkzone reports them all, and zone writes and
# resets move the write pointer as they should (what the zone tests of
# iotrail build on).
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

SIZE_MB=1024 ZONE_MB=16
ZONES=$((SIZE_MB / ZONE_MB))
names="vm_zns_zoned vm_zns_zones vm_zns_write_reset"
why=$(vm_blocker)
if [ -n "$why" ]; then
	skip_all "$why" $names
	exit 0
fi
command -v blkzone >/dev/null ||
	{ skip_all "blkzone is not installed (util-linux)" $names; exit 0; }

cat > "$TMP/zns.sh" <<'EOF'
d=/dev/nvme0n1
echo "zoned=$(cat /sys/block/nvme0n1/queue/zoned)"
echo "nr_zones=$(cat /sys/block/nvme0n1/queue/nr_zones)"
echo "chunk_sectors=$(cat /sys/block/nvme0n1/queue/chunk_sectors)"
echo "report_zones=$(blkzone report $d | grep -c 'start:')"
# zone 1: write 1 MiB at its start, then reset it
z1=$(cat /sys/block/nvme0n1/queue/chunk_sectors)
dd if=/dev/zero of=$d bs=1M count=1 seek=$((z1 * 512 / 1048576)) oflag=direct status=none &&
	echo "after_write=$(blkzone report -o $z1 -c 1 $d | grep -o 'wptr 0x[0-9a-f]*')"
blkzone reset -o $z1 -c 1 $d &&
	echo "after_reset=$(blkzone report -o $z1 -c 1 $d | grep -o 'wptr 0x[0-9a-f]*')"
EOF
vm vm_zns --zns --nvme-size ${SIZE_MB}M --zone-size ${ZONE_MB}M -- bash "$TMP/zns.sh"
zoned=$(value zoned vm_zns)
if [ -z "$zoned" ]; then
	why=$(vm_why vm_zns)
	for n in $names; do fail "$n" "the VM did not run the command: $why"; done
	exit 1
fi
if [ "$zoned" = host-managed ]; then
	pass "vm_zns_zoned (queue/zoned $zoned; ${VM_SECS} s)"
else
	fail vm_zns_zoned "queue/zoned is '$zoned', want host-managed"
fi

nr=$(value nr_zones vm_zns) rep=$(value report_zones vm_zns)
if [ "$nr" = "$ZONES" ] && [ "$rep" = "$ZONES" ]; then
	pass "vm_zns_zones ($rep zones of $ZONE_MB MiB)"
else
	fail vm_zns_zones "nr_zones '$nr', blkzone report lists '$rep', want $ZONES"
fi

# 1 MiB = 2048 sectors of 512 bytes; blkzone shows the wptr relative to the zone start
w=$(value after_write vm_zns) r=$(value after_reset vm_zns)
if [ "$w" = "wptr 0x000800" ] && [ "$r" = "wptr 0x000000" ]; then
	pass "vm_zns_write_reset (1 MiB write: $w; reset: $r)"
else
	fail vm_zns_write_reset "after a 1 MiB write '$w' (want wptr 0x000800), after reset '$r' (want wptr 0x000000)"
fi
exit $FAILED
