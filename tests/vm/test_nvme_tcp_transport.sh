#!/usr/bin/env bash
# The NVMe/TCP transport layers (nvme-tcp, nvmet-tcp) and the fabric path
# as stages, over loopback (tests/vm/nvme-tcp-loop: namespace 1 on a
# null_blk disk without delay, namespace 2 on one with DELAY_NS and one
# hardware tag), one boot:
#  - both layers record with the block layer, on fentry (the trace's hooks);
#  - four workloads on namespace 1, each the PDU path it exercises: 4K
#    random reads (one C2H data PDU), 8K random writes (in-capsule data),
#    128K sequential writes (R2T, then H2C data), 1M sequential reads (C2H
#    data in many sends): every I/O fio made is matched, every one is split
#    to the network and its target.dev to the backing disk's bios, and the
#    parts add up (per I/O: detail_sum_ok, dev_sum_ok; in the sums: the
#    parts' sum_ns == host.out + target + host.in);
#  - the R2T round trip: every 128K write's target.queue splits into
#    r2t.* and h2c.* (R2T out, landed on the host, H2C data out, landed on
#    the target), adding up; no 8K write (in-capsule) and no read has one;
#  - SQ head pointer updates disabled (a second controller, disable_sqflow):
#    reads complete on their data PDU, no response PDU: matched and split
#    all the same, target.send 0;
#  - cost: events and trace bytes per 4K read across both sides (the goal:
#    at most 16 and 512);
#  - the send backlog (ntprof's S2): one I/O queue for two CPUs; 16 reads
#    at once from the CPU that is not the queue's queue up behind each
#    other: 1 to 15 ahead;
#  - the io_work scheduling delay (queued -> running) in the same run: on
#    both sides' I/O queues, no more runs than commands (no injected delay);
#  - ground truth, the device: reads at QD1 on namespace 2 alone: target.dev's
#    average is DELAY_NS + its average at QD1 on namespace 1, within 10%;
#  - ground truth, the network: netem delays lo by NETEM_MS: net.out and
#    net.back each within 10% of it, and no other stage near it;
#  - interference: the same reads on namespace 2 while a second fio hammers
#    its null_blk disk directly (one tag): `iotrail diff` names target.dev
#    the bottleneck.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

DELAY_NS=20000000 # TCG fires a null_blk timer 0.3-1 ms late (more on a loaded host): under 5%
NETEM_MS=80 # TCG adds 1-3 ms of timer, softirq and cross-CPU latency each way: under 4%
names="vm_tcp_layers vm_tcp_read4k vm_tcp_write8k vm_tcp_write128k vm_tcp_r2t vm_tcp_read1m vm_tcp_sqhd_disabled vm_tcp_cost vm_tcp_backlog vm_tcp_io_work
       vm_tcp_dev_delay vm_tcp_netem vm_tcp_diff_target_dev"
vm_skip_unless fio jq tc -- $names

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/transport.sh" <<GUEST
# one I/O queue for both CPUs: a request from the CPU that is not the
# queue's goes to its io_work, so requests can queue up behind each other
NVME_IO_QUEUES=1 tests/vm/nvme-tcp-loop 0 $DELAY_NS:1 > $out/setup 2> $out/setup.err || exit 0
. $out/setup
rec() { # NAME DISK RW BS DEPTH NIOS [FIO OPTION]
	build/iotrail record --layers block -o $out/\$1.trail -- \
		fio --name=\$1 --filename=/dev/\$2 --rw=\$3 --bs=\$4 --direct=1 --ioengine=libaio \
		    --iodepth=\$5 --number_ios=\$6 --size=256M --randrepeat=1 \${7:-} \
		    --output-format=json --output=$out/\$1.fio.json 2> $out/\$1.err
	build/iotrail report --json $out/\$1.trail > $out/\$1.json
}
rec read4k \$ns1 randread 4k 4 400
rec write8k \$ns1 randwrite 8k 4 200
# 128K writes 128K apart (write:128k): sequential ones merge into fewer
# commands when the guest is slow (a CI run beside a benchmark: 97 of 100)
rec write128k \$ns1 write:128k 128k 4 100
rec read1m \$ns1 read 1m 2 40
rec qd1 \$ns1 randread 4k 1 40
# 16 at once from the CPU that is not the queue's (its io_cpu is CPU 0)
rec qd16 \$ns1 randread 4k 16 400 --cpus_allowed=1
rec base \$ns2 randread 4k 1 40
# the network: every packet on lo waits NETEM_MS (both directions)
modprobe sch_netem && tc qdisc add dev lo root netem delay ${NETEM_MS}ms &&
	rec netem \$ns1 randread 4k 1 24
tc qdisc del dev lo root 2>/dev/null
# interference: a second fio on namespace 2's null_blk disk (one tag)
# (eight threads at QD1: each waits for the tag in its own submission, so
# eight wait at once; one thread at QD8 would wait for one at a time)
fio --name=hog --filename=/dev/\$nullb2 --rw=randread --bs=4k --direct=1 --ioengine=psync \
    --numjobs=8 --thread --group_reporting --time_based --runtime=600 --output=/dev/null &
hog=\$!
sleep 1
rec loaded \$ns2 randread 4k 1 20
kill \$hog; wait \$hog 2>/dev/null
build/iotrail diff --json $out/base.trail $out/loaded.trail > $out/diff.json 2> $out/diff.err
# a second controller that asks the target not to report SQ head pointers:
# a successful read then has no response PDU, its C2H data carries success
echo "transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=nqn.2026-01.io.iotrail:fabric,disable_sqflow,duplicate_connect" \
	> /dev/nvme-fabrics 2> $out/sqflow.err
for t in \$(seq 50); do
	d=\$(cd /sys/class/nvme && for c in nvme*; do [ \$c = \$ctrl ] && continue
		for b in \$c/\${c}n*; do [ "\$(cat \$b/nsid 2>/dev/null)" = 1 ] && basename \$b; done; done | head -n1)
	[ -n "\$d" ] && [ -b /dev/\$d ] && break
	sleep 0.1
done
echo "sqflow_disk=\$d" >> $out/setup
[ -n "\$d" ] && rec sqflow \$d randread 4k 4 200
GUEST
vm vm_tcp --out "$out" --timeout 400 -- bash "$TMP/transport.sh"

ns1=$(sed -n 's/^ns1=//p' "$out/setup" 2>/dev/null)
if [ -z "$ns1" ]; then
	w=$(head -n1 "$out/setup.err" 2>/dev/null)
	for n in $names; do fail "$n" "no NVMe/TCP disk in the guest: ${w:-$(vm_why vm_tcp)}"; done
	exit 1
fi

hooks=$(jq -r '.host.hooks' "$out/read4k.json" 2>/dev/null)
case ";$hooks;" in
	*\;nvme-tcp=fentry*\;nvmet-tcp=fentry*) pass "vm_tcp_layers ($hooks)" ;;
	*) fail vm_tcp_layers "hooks '$hooks'; record: $(grep -m2 -i tcp "$out/read4k.err")" ;;
esac

# every I/O matched and split, the parts adding up, per I/O and in the sums
workload() { # TEST NAME OP
	local t=$1 n=$2 op=$3 fio_ios line
	fio_ios=$(jq -r --arg op "$op" '.jobs[0][$op].total_ios' "$out/$n.fio.json" 2>/dev/null)
	line=$(jq -r --arg op "$op" '.fabric as $f | $f.by_opcode[$op] as $o |
		($o.stages | map({(.name): .sum_ns}) | add) as $s |
		[$o.count, $f.detailed, $f.detail_sum_ok, $f.unmatched_io, $f.dev_split, $f.dev_sum_ok,
		 $f.dev_unlinked,
		 ($s["host.queue"] + $s["host.send"] + $s["net.out"] + $s["target.recv"]) == $s["host.out"],
		 ($s["target.queue"] + $s["target.dev"]) == $s.target,
		 ($s["target.sendq"] + $s["target.send"] + $s["net.back"] + $s["host.complete"]) == $s["host.in"],
		 ([$o.stages[] | select(.part_of) | "\(.name)=\(.ns.avg / 1000 | floor)"] | join(" "))] | @tsv' \
		"$out/$n.json" 2>/dev/null)
	read -r count detailed sumok uio dsplit dsumok dunl s1 s2 s3 avgs <<< "$line"
	# every split command has its backing bios, or is counted without them
	# (a lost block event, flagged by the report: at most 2%, or as many as
	# the probe runs the kernel skipped, which the report counts: under TCG
	# a block probe is now and then interrupted by itself, 9 runs in one
	# recording of 40 1M reads)
	local misses allowed
	misses=$(jq -r '.probe_misses // 0' "$out/$n.json" 2>/dev/null)
	allowed=$(( fio_ios / 50 > ${misses:-0} ? fio_ios / 50 : ${misses:-0} ))
	if [ -n "$fio_ios" ] && [ "$fio_ios" -gt 0 ] && [ "$count" = "$fio_ios" ] &&
	   [ "$detailed" = "$fio_ios" ] && [ "$sumok" = "$detailed" ] && [ "$uio" = 0 ] &&
	   [ $((dsplit + dunl)) = "$fio_ios" ] && [ "$dunl" -le "$allowed" ] &&
	   [ "$dsumok" = "$dsplit" ] && [ "$s1$s2$s3" = truetruetrue ]; then
		pass "$t (fio total_ios $fio_ios = matched $count = split $detailed = with the backing disk's bios $dsplit + without $dunl, parts add up on $sumok and $dsumok and in the sums; avg us: $avgs)"
	else
		fail "$t" "fio total_ios '$fio_ios', matched '$count', split '$detailed', adding up '$sumok', with backend bios '$dsplit' adding up '$dsumok', without '$dunl' (allowed $allowed: 2% or the report's $misses probe misses), unmatched on I/O queues '$uio', sums '$s1 $s2 $s3'; not split: $(jq -c '.fabric.not_detailed' "$out/$n.json" 2>/dev/null); record: $(head -c 200 "$out/$n.err")"
	fi
}
workload vm_tcp_read4k read4k read
workload vm_tcp_write8k write8k write
workload vm_tcp_write128k write128k write
workload vm_tcp_read1m read1m read

# the R2T round trip: fio's 128K writes each one, the others none
r2t() { jq -r "[.fabric.r2t_split, .fabric.r2t_sum_ok] | @tsv" "$out/$1.json" 2>/dev/null; }
read -r w128 w128ok <<< "$(r2t write128k)"
read -r w8 _ <<< "$(r2t write8k)"
read -r r4 _ <<< "$(r2t read4k)"
fio_ios=$(jq -r '.jobs[0].write.total_ios' "$out/write128k.fio.json" 2>/dev/null)
r2tavgs=$(jq -r '[.fabric.by_opcode.write.stages[] | select(.part_of == "target.queue") |
	"\(.name)=\(.ns.avg / 1000 | floor)"] | join(" ")' "$out/write128k.json" 2>/dev/null)
if [ -n "$fio_ios" ] && [ "$fio_ios" -gt 0 ] && [ "$w128" = "$fio_ios" ] && [ "$w128ok" = "$w128" ] &&
   [ "$w8" = 0 ] && [ "$r4" = 0 ]; then
	pass "vm_tcp_r2t (fio's $fio_ios 128K writes: $w128 split into the R2T round trip, adding up on $w128ok; 8K writes and 4K reads none; avg us: $r2tavgs)"
else
	fail vm_tcp_r2t "fio's 128K writes '$fio_ios', R2T split '$w128' adding up '$w128ok'; 8K writes '$w8', 4K reads '$r4' (want 0)"
fi

# SQ head pointer updates disabled: reads complete on their C2H data PDU
# (no response PDU): matched and split all the same, target.send is 0
# (the response point is the data's), while the reads with responses have
# their data in target.send
d=$(sed -n 's/^sqflow_disk=//p' "$out/setup" 2>/dev/null)
if [ -z "$d" ] || [ ! -s "$out/sqflow.json" ]; then
	fail vm_tcp_sqhd_disabled "no second controller with disable_sqflow: $(head -c 200 "$out/sqflow.err" 2>/dev/null)"
else
	workload vm_tcp_sqhd_disabled sqflow read
	read -r s0 s1 <<< "$(jq -r --slurp '[.[] | .fabric.by_opcode.read.stages[] |
		select(.name == "target.send") | .sum_ns] | @tsv' "$out/sqflow.json" "$out/read4k.json" 2>/dev/null)"
	if [ "$s0" = 0 ] && [ -n "$s1" ] && [ "$s1" -gt 0 ]; then
		pass "vm_tcp_sqhd_disabled_send (target.send sum 0 ns without response PDUs, $s1 ns with them)"
	else
		fail vm_tcp_sqhd_disabled_send "target.send sum without response PDUs '$s0' ns (want 0), with '$s1'"
	fi
fi

# cost per 4K read, both sides: the whole trace over fio's I/Os (fio's
# open and the keep-alives are in it too: an upper bound)
events=$(jq -r '.events' "$out/read4k.json" 2>/dev/null)
bytes=$(stat -c %s "$out/read4k.trail" 2>/dev/null)
fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/read4k.fio.json" 2>/dev/null)
verdict=$(awk -v e="$events" -v b="$bytes" -v n="$fio_ios" 'BEGIN {
	if (n <= 0 || e == "" || b == "") { print "no"; exit }
	printf "%s %.2f %.0f", (e / n <= 16 && b / n <= 512) ? "ok" : "no", e / n, b / n }')
read -r ok epi bpi <<< "$verdict"
if [ "$ok" = ok ]; then
	pass "vm_tcp_cost ($epi events and $bpi trace bytes per 4K read, both sides, fio's setup included: $events events, $bytes bytes, $fio_ios reads)"
else
	fail vm_tcp_cost "$epi events and $bpi bytes per 4K read (goal 16 and 512; $events events, $bytes bytes, $fio_ios reads)"
fi

# the send backlog: 16 reads at once on one queue from another CPU than
# its io_work's: some wait behind others (at most 15 ahead)
line=$(jq -r '[.fabric.queues[] | select(.qid > 0) | {c: .commands, m: .backlog_max, a: .backlog_avg}] |
	[(map(.c) | add), (map(.m) | max), (map(.a) | max), length] | @tsv' "$out/qd16.json" 2>/dev/null)
read -r bcmds bmax bavg bqueues <<< "$line"
fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/qd16.fio.json" 2>/dev/null)
if [ -n "$bmax" ] && [ "$bcmds" = "$fio_ios" ] && [ "$bmax" -ge 1 ] && [ "$bmax" -le 15 ]; then
	pass "vm_tcp_backlog (QD16 from CPU 1 on the queue of CPU 0: $bcmds commands on $bqueues queue(s), up to $bmax ahead, avg $bavg)"
else
	fail vm_tcp_backlog "QD16: commands '$bcmds' (fio $fio_ios) on '$bqueues' queues, max ahead '$bmax' (want 1..15), avg '$bavg'"
fi

# the io_work scheduling delay: both sides' I/O queues have runs, no more
# runs than commands sent (a run that sent sent one at least), every run a
# delay (no ground truth here: no injected delay)
line=$(jq -r '.fabric as $f | [$f.io_work[] | select(.qid > 0)] as $q |
	[([$q[] | select(.side == "initiator") | .runs] | add // 0),
	 ([$q[] | select(.side == "target") | .runs] | add // 0),
	 ([$q[] | select(.side == "initiator") | .wait_ns.avg] | max // 0),
	 ([$q[] | select(.side == "initiator") | .wait_ns.max] | max // 0),
	 ([$q[] | select(.side == "target") | .wait_ns.avg] | max // 0),
	 ([$q[] | .wait_ns.min] | min // 0)] | @tsv' "$out/qd16.json" 2>/dev/null)
read -r hruns truns havg hmax tavg wmin <<< "$line"
fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/qd16.fio.json" 2>/dev/null)
if [ -n "$wmin" ] && [ -n "$fio_ios" ] && [ "$hruns" -gt 0 ] && [ "$truns" -gt 0 ] &&
   [ "$hruns" -le "$fio_ios" ] && [ "$wmin" -gt 0 ]; then
	pass "vm_tcp_io_work (QD16, $fio_ios reads: initiator $hruns io_work runs that sent, wait avg $((havg / 1000)) us, max $((hmax / 1000)) us; target $truns runs, avg $((tavg / 1000)) us)"
else
	fail vm_tcp_io_work "QD16 ($fio_ios reads): initiator runs '$hruns' wait avg '$havg' max '$hmax' ns, target runs '$truns', least wait '$wmin': $(jq -c '.fabric.io_work' "$out/qd16.json" 2>/dev/null | head -c 300); hooks $(jq -r .host.hooks "$out/qd16.json" 2>/dev/null)"
fi

# the device: target.dev on namespace 2 = DELAY_NS + target.dev without delay
avg() { # FILE STAGE: its average in ns for reads
	jq -r --arg s "$2" '.fabric.by_opcode.read.stages[] | select(.name == $s) | .ns.avg' "$1" 2>/dev/null
}
t0=$(avg "$out/qd1.json" target.dev)
t1=$(avg "$out/base.json" target.dev)
verdict=$(delay_verdict "$t0" "$t1" $DELAY_NS)
read -r ok want got off <<< "$verdict"
if [ "$ok" = ok ]; then
	pass "vm_tcp_dev_delay (null_blk completion_nsec $DELAY_NS: target.dev avg $got us, want $want us, off by $off)"
else
	fail vm_tcp_dev_delay "target.dev avg with delay '$t1' ns, without '$t0' ns, delay $DELAY_NS (verdict '$verdict')"
fi

# the network: net.out and net.back carry netem's delay, nothing else does
if [ -s "$out/netem.json" ]; then
	line=$(jq -r --argjson d $((NETEM_MS * 1000000)) '.fabric.by_opcode.read.stages as $st |
		($st | map({(.name): .ns.avg}) | add) as $a |
		[$a["net.out"], $a["net.back"],
		 ([$st[] | select(.part_of and .name != "net.out" and .name != "net.back" and .ns.avg > $d / 2) | .name] |
		  join(",") | if . == "" then "-" else . end),
		 ([$st[] | select(.part_of) | "\(.name)=\(.ns.avg / 1000 | floor)"] | join(" "))] | @tsv' \
		"$out/netem.json" 2>/dev/null)
	read -r nout nback others avgs <<< "$line"
	verdict=$(awk -v a="$nout" -v b="$nback" -v d=$((NETEM_MS * 1000000)) 'BEGIN {
		if (a == "" || b == "") { print "no"; exit }
		oa = (a - d) / d; if (oa < 0) oa = -oa; ob = (b - d) / d; if (ob < 0) ob = -ob
		print (oa <= 0.10 && ob <= 0.10) ? "ok" : "no" }')
	if [ "$verdict" = ok ] && [ "$others" = - ]; then
		pass "vm_tcp_netem (netem ${NETEM_MS} ms on lo: net.out avg $((${nout%.*} / 1000)) us, net.back avg $((${nback%.*} / 1000)) us; avg us: $avgs)"
	else
		fail vm_tcp_netem "netem ${NETEM_MS} ms: net.out avg '$nout' ns, net.back avg '$nback' ns (want each within 10%), other stages over half of it: '$others'; avg us: $avgs"
	fi
else
	fail vm_tcp_netem "no netem trace: $(head -c 300 "$out/netem.err" 2>/dev/null)"
fi

# interference on the target's device: diff names target.dev
read -r bn lad q2d <<< "$(jq -r '[.bottleneck.stage, .bottleneck.lad_avg,
	([.groups[] | select(.key.layer == "fabric" and .key.op == "read") | .stages[] |
	  select(.name == "tdev.q2d") | .lad_avg] | first // "-")] | @tsv' "$out/diff.json" 2>/dev/null)"
if [ "$bn" = target.dev ]; then
	pass "vm_tcp_diff_target_dev (a second fio on the target's null_blk disk: bottleneck $bn, LAD $lad at avg; inside it tdev.q2d, the wait for the disk's one tag, LAD $q2d)"
else
	fail vm_tcp_diff_target_dev "bottleneck '$bn' (LAD '$lad'), want target.dev; diff: $(head -c 300 "$out/diff.err" 2>/dev/null) $(jq -c '.bottleneck' "$out/diff.json" 2>/dev/null)"
fi
exit 0
