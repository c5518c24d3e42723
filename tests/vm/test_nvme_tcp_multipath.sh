#!/usr/bin/env bash
# NVMe/TCP with native NVMe multipath (nvme_core multipath=Y, Debian's
# default), one boot: the namespace's visible disk is a head (bio-based)
# and its requests run on a hidden per-path disk that has no device number
# in sysfs.
#  - `record --dev HEAD` is refused with one line that says so (it would
#    record no request at all);
#  - recorded without --dev, fio's reads on the head are all matched to
#    their target commands and split to the network: the join goes by the
#    NVMe command, not by disk.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=200
names="vm_multipath_dev_refused vm_multipath_fabric"
vm_skip_unless fio jq -- $names

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/mp.sh" <<GUEST
NVME_MULTIPATH=Y tests/vm/nvme-tcp-loop 0 > $out/setup 2> $out/setup.err || exit 0
. $out/setup
build/iotrail record --layers block --dev \$ns1 -o $out/dev.trail -- true > $out/dev.out 2> $out/dev.err
echo \$? > $out/dev.rc
build/iotrail record --layers block -o $out/mp.trail -- \
	fio --name=mp --filename=/dev/\$ns1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	    --iodepth=4 --number_ios=$NIOS --size=256M --randrepeat=1 \
	    --output-format=json --output=$out/fio.json 2> $out/record.err
build/iotrail report --json $out/mp.trail > $out/mp.json
GUEST
vm vm_multipath --out "$out" -- bash "$TMP/mp.sh"

ns1=$(sed -n 's/^ns1=//p' "$out/setup" 2>/dev/null)
if [ -z "$ns1" ]; then
	w=$(head -n1 "$out/setup.err" 2>/dev/null)
	for n in $names; do fail "$n" "no NVMe/TCP disk in the guest: ${w:-$(vm_why vm_multipath)}"; done
	exit 1
fi

rc=$(cat "$out/dev.rc" 2>/dev/null)
lines=$(wc -l < "$out/dev.err" 2>/dev/null)
if [ "$rc" != 0 ] && [ "$lines" = 1 ] && grep -q "multipath head" "$out/dev.err" && [ ! -e "$out/dev.trail" ]; then
	pass "vm_multipath_dev_refused (exit $rc: $(cat "$out/dev.err"))"
else
	fail vm_multipath_dev_refused "exit '$rc', $lines lines: $(head -c 300 "$out/dev.err" 2>/dev/null)"
fi

fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/fio.json" 2>/dev/null)
read -r count detailed sumok uio <<< "$(jq -r '[.fabric.by_opcode.read.count // 0, .fabric.detailed,
	.fabric.detail_sum_ok, .fabric.unmatched_io] | @tsv' "$out/mp.json" 2>/dev/null)"
if [ "$fio_ios" = "$NIOS" ] && [ "$count" = "$fio_ios" ] && [ "$detailed" = "$fio_ios" ] &&
   [ "$sumok" = "$detailed" ] && [ "$uio" = 0 ]; then
	pass "vm_multipath_fabric (head $ns1: fio total_ios $fio_ios = matched $count = split $detailed, adding up on $sumok)"
else
	fail vm_multipath_fabric "fio total_ios '$fio_ios', matched '$count', split '$detailed', adding up '$sumok', unmatched on I/O queues '$uio'; record: $(head -c 200 "$out/record.err")"
fi
exit 0
