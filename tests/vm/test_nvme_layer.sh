#!/usr/bin/env bash
# The NVMe driver layer on the emulated NVMe SSD (run --nvme), one boot:
#  - fio does exactly NIOS 4K random reads (libaio, iodepth 8) under
#    `iotrail record`: the report's NVMe read commands == fio's total_ios,
#    every command is linked to its block request, the NVMe stages are on
#    every trail and add up to Q2C, the queue depth at submission is within
#    fio's iodepth; `iotrail export --format csv` has one read row per I/O;
#  - blkdiscard of two known ranges: the report lists exactly those DSM ranges;
#  - nvme:nvme_sq (where the kernel has it): one SQ backlog sample per read
#    CQE, backlog <= iodepth (a QD1 run: never above 1), the SQ size the
#    controller was set up with, the D2H + H2N split of D2N;
#  - depth over time per queue: fio pinned to one CPU uses one queue, whose
#    depth at submission reaches exactly iodepth, and whose per-interval
#    series agrees with the queue's totals and sums to the all-queue series;
#  - the text report's device table shows the optimal I/O size from sysfs;
#  - --filter 'op=read && size>=32k' over 4K and 64K reads: the block and
#    NVMe layers keep exactly fio's 64K reads, each with its command (the
#    NVMe layer follows the block layer's decision on this kernel too);
#  - the online mode on this kernel (issue 14): `iotrail top --json`'s
#    intervals add up to fio's reads and writes exactly, Q2C counted for
#    each;
#  - the events of a probe that interrupted another on its CPU (the NVMe
#    completion's interrupt; they go through the CPU's ring, not its event
#    buffer: bpf/events.bpf.h): fio's 5000 reads at QD 32 under record -v,
#    which counts them; the trace holds every I/O whole (6 events each:
#    Q, D, C and the NVMe S, H, N), nothing dropped. Skipped when no probe
#    interrupted another in the run (the path was not taken).
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=1000
NIOS1=300
DEPTH=8
names="vm_nvme_layer_hooks vm_nvme_layer_fio_commands vm_nvme_layer_linked vm_nvme_layer_stages
       vm_nvme_layer_qd vm_nvme_layer_csv vm_nvme_layer_discard_ranges vm_nvme_layer_sq_hook
       vm_nvme_layer_sq_backlog vm_nvme_layer_sq_qd1 vm_nvme_layer_cqe_stages vm_nvme_layer_qd_time
       vm_nvme_layer_opt_io vm_nvme_layer_filter vm_online_top vm_nvme_layer_nested"
vm_skip_unless fio jq -- $names vm_export_errors

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
T=/sys/kernel/tracing
[ -d \$T/events ] || T=/sys/kernel/debug/tracing
{ [ -e \$T/events/nvme/nvme_sq ] && echo nvme_sq=1 || echo nvme_sq=0
  echo sqsize=\$(cat /sys/class/nvme/nvme0/sqsize)
  echo opt_io=\$(cat /sys/block/nvme0n1/queue/optimal_io_size); } > $out/facts
build/iotrail record --layers block -o $out/fio.trail --dev nvme0n1 -- \
	fio --name=nvl --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	    --iodepth=$DEPTH --number_ios=$NIOS --size=512M --randrepeat=1 --cpus_allowed=0 \
	    --output-format=json --output=$out/fio.json
build/iotrail report --json $out/fio.trail > $out/fio.report.json
build/iotrail report $out/fio.trail > $out/fio.report.txt
build/iotrail record --layers block -o $out/qd1.trail --dev nvme0n1 -- \
	fio --name=qd1 --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	    --iodepth=1 --number_ios=$NIOS1 --size=512M --randrepeat=1 --output-format=json --output=$out/qd1.json
build/iotrail report --json $out/qd1.trail > $out/qd1.report.json
build/iotrail export --format csv -o $out/fio.csv $out/fio.trail
build/iotrail record --layers block -o $out/discard.trail --dev nvme0n1 -- sh -c \
	'blkdiscard -o 1048576 -l 65536 /dev/nvme0n1 && blkdiscard -o 8388608 -l 12288 /dev/nvme0n1'
build/iotrail report --json $out/discard.trail > $out/discard.json
build/iotrail record --layers block -o $out/filter.trail --dev nvme0n1 --filter 'op=read && size>=32k' -- sh -c \
	'fio --name=f4 --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --number_ios=100 \
	     --size=64M --output-format=json --output=$out/f4.json &&
	 fio --name=f64 --filename=/dev/nvme0n1 --rw=randread --bs=64k --direct=1 --number_ios=50 \
	     --size=64M --output-format=json --output=$out/f64.json'
build/iotrail report --json $out/filter.trail > $out/filter.json
# the online mode: fio starts once top printed its first interval, and
# ends well inside the four after it
build/iotrail top --json --dev nvme0n1 --count 5 > $out/top.jsonl 2> $out/top.err &
TOP=\$!
while [ ! -s $out/top.jsonl ] && kill -0 \$TOP 2>/dev/null; do sleep 0.1; done
fio --name=top --filename=/dev/nvme0n1 --rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=8 \
    --number_ios=400 --size=64M --output-format=json --output=$out/top.fio.json
wait \$TOP
build/iotrail record -v --layers block -o $out/nested.trail --dev nvme0n1 -- \
	fio --name=nest --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	    --iodepth=32 --number_ios=5000 --size=512M --output-format=json --output=$out/nested.fio.json \
	2> $out/nested.err
build/iotrail report --json $out/nested.trail > $out/nested.json
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
# ---- nvme:nvme_sq: SQ backlog and the CQE time ----
F=$out/facts
has_sq=$(sed -n 's/^nvme_sq=//p' "$F")
sqsize=$(sed -n 's/^sqsize=//p' "$F")
sq_names="vm_nvme_layer_sq_hook vm_nvme_layer_sq_backlog vm_nvme_layer_sq_qd1 vm_nvme_layer_cqe_stages"
if [ "$has_sq" != 1 ]; then
	skip_all "the guest kernel has no nvme:nvme_sq tracepoint" $sq_names
else
	# the hook list names a hook only where it differs from its layer's
	# kind: nvme_sq hooked like the rest is "nvme=KIND" without "nvme_sq="
	case "$hooks" in
		*nvme_sq=none*) fail vm_nvme_layer_sq_hook "the guest has nvme:nvme_sq but hooks are '$hooks'" ;;
		*nvme=tp_btf*|*nvme=raw_tp*|*nvme_sq=tp_btf*|*nvme_sq=raw_tp*) pass "vm_nvme_layer_sq_hook ($hooks)" ;;
		*) fail vm_nvme_layer_sq_hook "the guest has nvme:nvme_sq but hooks are '$hooks'" ;;
	esac

	# every read CQE on an I/O queue gives one sample; the SQ size is the
	# controller's (sysfs sqsize is 0's based)
	read -r samples invalid bmax bavg qsizes <<< "$(jq -r '[.nvme.queues | map(select(.qid > 0)) |
		(map(.sq_backlog.samples) | add), (map(.sq_backlog.invalid) | add),
		(map(.sq_backlog.max) | max), (map(.sq_backlog.avg) | max),
		(map(select(.sq_backlog.samples > 0) | .sq_backlog.sq_size) | unique | join(","))] | @tsv' "$R")"
	if [ "$samples" = "$fio_ios" ] && [ "$invalid" = 0 ] && [ "$bmax" -le "$DEPTH" ] 2>/dev/null &&
	   { [ "$qsizes" = "$((sqsize + 1))" ] || [ "$qsizes" = "$sqsize" ]; }; then
		pass "vm_nvme_layer_sq_backlog ($samples samples = fio total_ios, backlog avg $bavg max $bmax <= iodepth $DEPTH, SQ size $qsizes, sysfs sqsize $sqsize)"
	else
		fail vm_nvme_layer_sq_backlog "samples $samples (want $fio_ios), invalid $invalid, max $bmax (want <= $DEPTH), SQ sizes '$qsizes' (sysfs sqsize $sqsize)"
	fi

	Q1=$out/qd1.report.json
	q1_ios=$(jq -r '.jobs[0].read.total_ios' "$out/qd1.json" 2>/dev/null)
	read -r s1 m1 qd1 <<< "$(jq -r '[.nvme.queues | map(select(.qid > 0)) | (map(.sq_backlog.samples) | add),
		(map(.sq_backlog.max) | max), (map(.inflight_at_submit.max) | max)] | @tsv' "$Q1" 2>/dev/null)"
	if [ "$q1_ios" = "$NIOS1" ] && [ "$s1" = "$q1_ios" ] && [ "$m1" -le 1 ] 2>/dev/null && [ "$qd1" = 1 ]; then
		pass "vm_nvme_layer_sq_qd1 (fio QD1, $q1_ios I/Os: $s1 samples, SQ backlog max $m1, in flight max $qd1)"
	else
		fail vm_nvme_layer_sq_qd1 "fio total_ios $q1_ios (want $NIOS1), samples $s1, backlog max $m1 (want <= 1), in flight max $qd1 (want 1)"
	fi

	st2=$(jq -r '[.groups[] | select(.key.op == "read") | .stages[] | "\(.name)=\(.count)"] | join(" ")' "$R")
	ok=1
	for w in "D2H=$fio_ios" "H2N=$fio_ios"; do case " $st2 " in *" $w "*) ;; *) ok=0 ;; esac; done
	cqe_ok=$(awk -F, 'NR > 1 && $11 == 2 && $22 >= $1 && $22 <= $2' "$out/fio.csv" | wc -l)
	if [ $ok = 1 ] && [ "$sumok" = "$trails" ] && [ "$cqe_ok" = "$fio_ios" ]; then
		pass "vm_nvme_layer_cqe_stages (D2H and H2N on every read trail, D <= H <= N on $sumok of $trails; CSV cqe_time_ns within submit..complete on $cqe_ok rows)"
	else
		fail vm_nvme_layer_cqe_stages "stages '$st2' (want D2H=H2N=$fio_ios), sums ok $sumok of $trails, CSV rows with submit <= cqe <= complete: $cqe_ok of $fio_ios"
	fi
fi

# ---- queue depth over time per NVMe queue (fio pinned to CPU 0: one queue) ----
read -r fq fcmds fmax tmax tlen npts qsum gsum <<< "$(jq -r '.nvme as $n | ($n.queues | map(select(.qid > 0)) |
	max_by(.commands)) as $q | [$q.qid, $q.commands, $q.inflight_at_submit.max,
	($q.qd_over_time.qd_max | max), ($q.qd_over_time.qd_avg | length), ($n.timeline.points | length),
	([$n.queues[] | [.qd_over_time.qd_avg, ($n.timeline.points | map(.dur_s))] | transpose[] | .[0] * .[1]] | add),
	([$n.timeline.points[] | .qd_avg * .dur_s] | add)] | @tsv' "$R")"
close=$(awk -v a="$qsum" -v b="$gsum" 'BEGIN { d = a - b; if (d < 0) d = -d; print (b > 0 && d / b < 0.001) ? 1 : 0 }')
if [ "$fcmds" = "$fio_ios" ] && [ "$fmax" = "$DEPTH" ] && [ "$tmax" = "$fmax" ] && [ "$tlen" = "$npts" ] &&
   [ "$close" = 1 ]; then
	pass "vm_nvme_layer_qd_time (fio's queue $fq: $fcmds commands, depth max $fmax = iodepth, per-interval max $tmax over $tlen intervals; queues' depth-seconds $qsum = all-queue $gsum)"
else
	fail vm_nvme_layer_qd_time "queue $fq: commands $fcmds (want $fio_ios), max $fmax (want $DEPTH), interval max $tmax, $tlen intervals vs $npts points, depth-seconds $qsum vs $gsum"
fi

# ---- the optimal I/O size in the text report's device table ----
opt=$(sed -n 's/^opt_io=//p' "$F")
jopt=$(jq -r '.devices[] | select(.name == "nvme0n1") | .optimal_io_size' "$R" 2>/dev/null)
col=$(awk '/^Devices/ { d = 1; next } d && $1 == "name" { for (i = 1; i <= NF; i++) if ($i == "opt_io") c = i; next }
	d && $1 == "nvme0n1" { print $c; exit }' "$out/fio.report.txt")
# the report prints whole units without ".0" (4K), numfmt with (4.0K)
if [ "$opt" = 0 ]; then want_col=-; else want_col=$(numfmt --to=iec "$opt" | sed 's/\.0\([KMGT]\)$/\1/'); fi
if [ -n "$col" ] && [ "$jopt" = "$opt" ] && [ "$col" = "$want_col" ]; then
	pass "vm_nvme_layer_opt_io (sysfs optimal_io_size $opt, JSON $jopt, text column '$col')"
else
	fail vm_nvme_layer_opt_io "sysfs $opt, JSON '$jopt', text column '$col' (want '$want_col')"
fi

# ---- the filter on the NVMe layer ----
F=$out/filter.json
n4=$(jq -r '.jobs[0].read.total_ios' "$out/f4.json" 2>/dev/null)
n64=$(jq -r '.jobs[0].read.total_ios' "$out/f64.json" 2>/dev/null)
read -r kept cmds linked unlinked passed fout <<< "$(jq -r '[([.groups[].count] | add // 0),
	(.nvme.by_opcode.read.count // 0), (.nvme.linked // 0), (.nvme.unlinked // 0),
	.task.ios_passed, .task.ios_filtered_out] | @tsv' "$F" 2>/dev/null)"
if [ ! -s "$F" ]; then
	fail vm_nvme_layer_filter "no report of the filtered recording"
elif [ "$n4" = 100 ] && [ "$n64" = 50 ] && [ "$kept" = "$n64" ] && [ "$cmds" = "$n64" ] &&
     [ "$linked" = "$n64" ] && [ "$unlinked" = 0 ] && [ "$passed" = "$n64" ] && [ "$fout" = "$n4" ]; then
	pass "vm_nvme_layer_filter ($kept block reads and $cmds NVMe read commands, all linked == fio's $n64 64K reads; its $n4 4K reads left out, as the kernel counted: $passed passed, $fout filtered out)"
else
	fail vm_nvme_layer_filter "fio 4K $n4, 64K $n64; kept $kept block I/Os, $cmds NVMe read commands ($linked linked, $unlinked unlinked); the kernel counted $passed passed, $fout filtered out"
fi

# ---- the online mode ----
T=$out/top.jsonl
read -r r w rq wq <<< "$(jq -s -r '[([.[].groups[] | select(.op == "read") | .ios] | add // 0),
	([.[].groups[] | select(.op == "write") | .ios] | add // 0),
	([.[].groups[] | select(.op == "read") | .q2c.count] | add // 0),
	([.[].groups[] | select(.op == "write") | .q2c.count] | add // 0)] | @tsv' "$T" 2>/dev/null)"
fr=$(jq '.jobs[0].read.total_ios' "$out/top.fio.json" 2>/dev/null)
fw=$(jq '.jobs[0].write.total_ios' "$out/top.fio.json" 2>/dev/null)
n=$(grep -c '^{' "$T" 2>/dev/null)
if [ -n "$fr" ] && [ $((fr + fw)) = 400 ] && [ "$r" = "$fr" ] && [ "$w" = "$fw" ] &&
   [ "$rq" = "$fr" ] && [ "$wq" = "$fw" ] && [ "$n" = 5 ]; then
	pass "vm_online_top ($n intervals of iotrail top --json: $r reads and $w writes, each with its Q2C == fio's $fr and $fw)"
else
	fail vm_online_top "top's $n intervals: reads $r (Q2C $rq), writes $w (Q2C $wq); fio read '$fr', wrote '$fw'; $(head -c 200 "$out/top.err")"
fi

# ---- events of interrupting probes, through the rings ----
ringed=$(sed -n 's/^iotrail record: \([0-9]*\) block, NVMe and NVMe\/TCP events went through the rings.*/\1/p' "$out/nested.err")
summary=$(grep -E '^iotrail record: [0-9]+ I/Os' "$out/nested.err")
nf=$(jq '.jobs[0].read.total_ios' "$out/nested.fio.json" 2>/dev/null)
read -r reads cmds <<< "$(jq -r '[([.groups[] | select(.key.op == "read") | .count] | add // 0),
	(.nvme.by_opcode.read.count // 0)] | @tsv' "$out/nested.json" 2>/dev/null)"
if [ -z "$ringed" ]; then
	fail vm_nvme_layer_nested "record -v did not say how many events went through the rings: $(head -c 300 "$out/nested.err")"
elif [ "$ringed" = 0 ]; then
	skip vm_nvme_layer_nested "no probe interrupted another in this run (0 events through the rings): the path was not taken"
elif [ "$nf" = 5000 ] && [ "$reads" = 5000 ] && [ "$cmds" = 5000 ] &&
     [[ $summary == *" 5000 I/Os, 30000 events, 0 dropped"* || $summary == *" 5000 I/Os, 30001 events, 0 dropped"* ]]; then
	pass "vm_nvme_layer_nested ($ringed events of interrupting probes through the rings; fio's $nf reads == $reads block reads == $cmds NVMe read commands; $summary)"
else
	fail vm_nvme_layer_nested "fio $nf reads; block reads $reads, NVMe read commands $cmds; $ringed through the rings; $summary"
fi

exit $FAILED
