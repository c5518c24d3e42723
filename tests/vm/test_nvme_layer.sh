#!/usr/bin/env bash
# The NVMe driver layer on the emulated NVMe SSD (run --nvme), one boot:
#  - fio does exactly NIOS 4K random reads (libaio, iodepth 8) under
#    `iotrail record`: the report's NVMe read commands == fio's total_ios,
#    every command is linked to its block request, the NVMe stages are on
#    every trail and add up to Q2C, the queue depth at submission is within
#    fio's iodepth; `iotrail export --format csv` has one read row per I/O;
#  - blkdiscard of two known ranges: the report lists exactly those DSM ranges.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=1000
DEPTH=8
names="vm_nvme_layer_hooks vm_nvme_layer_fio_commands vm_nvme_layer_linked vm_nvme_layer_stages
       vm_nvme_layer_qd vm_nvme_layer_csv vm_nvme_layer_discard_ranges"
why=$(vm_blocker)
[ -z "$why" ] && ! command -v fio >/dev/null && why="fio is not installed (scripts/install-deps.sh)"
[ -z "$why" ] && ! command -v jq >/dev/null && why="jq is not installed (scripts/install-deps.sh)"
[ -z "$why" ] && [ ! -x build/iotrail ] && why="build/iotrail is not built (make)"
if [ -n "$why" ]; then
	skip_all "$why" $names vm_export_errors
	exit 0
fi

# export's error paths need no VM
e1=$(build/iotrail export --format xml /dev/null 2>&1); r1=$?
e2=$(build/iotrail export --format csv /etc/hostname 2>&1); r2=$?
if [ $r1 -ne 0 ] && [ $r2 -ne 0 ] && [ "$(echo "$e1" | wc -l)" = 1 ] && [ "$(echo "$e2" | wc -l)" = 1 ]; then
	pass "vm_export_errors (status $r1: $e1 / status $r2: $e2)"
else
	fail vm_export_errors "want one-line errors and non-zero exits, got $r1 '$e1', $r2 '$e2'"
fi

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/nvme_layer.sh" <<GUEST
build/iotrail record --layers block -o $out/fio.trail --dev nvme0n1 -- \
	fio --name=nvl --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	    --iodepth=$DEPTH --number_ios=$NIOS --size=512M --randrepeat=1 \
	    --output-format=json --output=$out/fio.json
build/iotrail report --json $out/fio.trail > $out/fio.report.json
build/iotrail export --format csv -o $out/fio.csv $out/fio.trail
build/iotrail record --layers block -o $out/discard.trail --dev nvme0n1 -- sh -c \
	'blkdiscard -o 1048576 -l 65536 /dev/nvme0n1 && blkdiscard -o 8388608 -l 12288 /dev/nvme0n1'
build/iotrail report --json $out/discard.trail > $out/discard.json
GUEST
vm vm_nvme_layer --nvme --out "$out" -- bash "$TMP/nvme_layer.sh"
R=$out/fio.report.json
if [ ! -s "$R" ]; then
	for n in $names; do fail "$n" "no report from the guest ($(vm_why vm_nvme_layer))"; done
	exit 1
fi

hooks=$(jq -r '.host.hooks' "$R")
case "$hooks" in
	*nvme=tp_btf*|*nvme=raw_tp*) pass "vm_nvme_layer_hooks ($hooks)" ;;
	*) fail vm_nvme_layer_hooks "hooks '$hooks' have no nvme layer; record said: $(grep -m1 'NVMe layer' "$TMP/vm_nvme_layer.err")" ;;
esac

fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/fio.json")
reads=$(jq -r '.nvme.by_opcode.read.count // 0' "$R")
if [ "$fio_ios" = "$NIOS" ] && [ "$reads" = "$fio_ios" ]; then
	pass "vm_nvme_layer_fio_commands (fio total_ios $fio_ios, NVMe read commands $reads)"
else
	fail vm_nvme_layer_fio_commands "fio total_ios $fio_ios (want $NIOS), NVMe read commands $reads"
fi

read -r linked unlinked trails block_reads <<< "$(jq -r '[.nvme.linked, .nvme.unlinked, .nvme.trails,
	([.groups[] | select(.key.op == "read") | .count] | add)] | @tsv' "$R")"
if [ "$linked" = "$reads" ] && [ "$unlinked" = 0 ] && [ "$trails" = "$block_reads" ] &&
   [ "$block_reads" = "$fio_ios" ]; then
	pass "vm_nvme_layer_linked ($linked of $reads commands on block trails, $trails trails with NVMe points)"
else
	fail vm_nvme_layer_linked "linked $linked, unlinked $unlinked, trails $trails, block reads $block_reads, commands $reads"
fi

sumok=$(jq -r '.nvme.stage_sum_ok' "$R")
st=$(jq -r '[.groups[] | select(.key.op == "read") | .stages[] | "\(.name)=\(.count)"] | join(" ")' "$R")
want="S2D=$fio_ios D2N=$fio_ios N2C=$fio_ios Q2C=$fio_ios"
ok=1
for w in $want; do case " $st " in *" $w "*) ;; *) ok=0 ;; esac; done
if [ $ok = 1 ] && [ "$sumok" = "$trails" ]; then
	pass "vm_nvme_layer_stages ($st; Q2I+I2D|Q2D+D2N+N2C == Q2C on $sumok of $trails trails)"
else
	fail vm_nvme_layer_stages "stages '$st' (want $want), stage sums ok on $sumok of $trails"
fi

qdmax=$(jq -r '[.nvme.queues[] | select(.qid > 0) | .inflight_at_submit.max] | max' "$R")
qdavg=$(jq -r '[.nvme.queues[] | select(.qid > 0) | .inflight_at_submit.avg] | max' "$R")
if [ "$qdmax" -ge 2 ] 2>/dev/null && [ "$qdmax" -le "$DEPTH" ]; then
	pass "vm_nvme_layer_qd (in flight per NVMe queue at submission: max $qdmax, avg $qdavg, fio iodepth $DEPTH)"
else
	fail vm_nvme_layer_qd "max in flight at submission '$qdmax', want 2..$DEPTH"
fi

want_hdr="start_time_ns,end_time_ns,latency_ns,process_name,pid,device,qid,slba,length_bytes,length_lbas,opcode"
hdr=$(head -n1 "$out/fio.csv" 2>/dev/null)
csv_reads=$(awk -F, 'NR > 1 && $11 == 2 && $6 == "nvme0n1" && $9 == 4096 && $10 == 8 && $3 == $2 - $1 && $4 == "fio"' "$out/fio.csv" | wc -l)
if [ -n "$hdr" ] && [ "${hdr#"$want_hdr"}" != "$hdr" ] && [ "$csv_reads" = "$fio_ios" ]; then
	pass "vm_nvme_layer_csv ($csv_reads rows: opcode 2, nvme0n1, 4096 bytes = 8 LBAs, process fio)"
else
	fail vm_nvme_layer_csv "header '$hdr', $csv_reads matching read rows, want $fio_ios"
fi

D=$out/discard.json
got=$(jq -r '[.nvme.discards.list[] | "\(.offset_bytes)+\(.bytes)"] | join(" ")' "$D" 2>/dev/null)
dsm=$(jq -r '.nvme.by_opcode.dsm.count // 0' "$D" 2>/dev/null)
if [ "$got" = "1048576+65536 8388608+12288" ] && [ "$dsm" = 2 ]; then
	pass "vm_nvme_layer_discard_ranges (2 DSM commands, ranges $got)"
else
	fail vm_nvme_layer_discard_ranges "DSM commands $dsm, ranges '$got', want '1048576+65536 8388608+12288'"
fi
exit $FAILED
