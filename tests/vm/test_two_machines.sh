#!/usr/bin/env bash
# Two machines, one trace (issue 10): two guests on one virtual network
# (tests/vm/run --pair), each with its own kernel clock. The target
# (10.0.9.2) exports two null_blk disks over nvmet-tcp (namespace 1 without
# delay, namespace 2 with DELAY_NS) and runs `iotrail agent` on the guest
# network; the initiator (10.0.9.1) connects to it and runs
# `iotrail record --target 10.0.9.2:4790 -- fio ...`. The guests talk to
# each other through files in a shared directory (req.NAME / req.NAME.done)
# when the target must act (netem on its NIC, kill its agent).
#  - two_agent_no_key: an agent asked to listen on the guest network with no
#    key refuses to start, with one line;
#  - two_merged: one file with both machines; the initiator's NVMe reads and
#    the target's nvmet reads each == fio's total_ios;
#  - two_matched: every read fio made is matched across the machines and
#    split into stages (the cross-machine join);
#  - two_clock: the offset's uncertainty is below the smallest round trip,
#    every matched I/O is causal on the merged timeline (the target
#    received after the initiator sent, and sent before the initiator
#    received) or off by less than the uncertainty, and at least 99.9%
#    are causal;
#  - two_dev_delay: null_blk's completion delay on the target lands in
#    target.dev: its count and average == the target kernel's own reads
#    and average time for that disk over the run (/sys/block/DISK/stat,
#    within 5%), which is at least the delay;
#  - two_netem: netem delays each guest's NIC by NETEM_MS (both directions,
#    so the clock estimate is not skewed): net.out and net.back each carry
#    it within 10% (over their values without netem; medians);
#  - two_wrong_key: a wrong key is refused on both ends with one line and
#    nothing is written;
#  - two_agent_killed: the agent killed (SIGKILL) mid-run: the initiator's
#    trace is whole, with the target's data up to its last pull and a
#    warning in the report.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

DELAY_NS=20000000
NETEM_MS=80 # TCG adds 1-4 ms per direction on a loaded host: under 5%
names="two_agent_no_key two_merged two_matched two_clock two_dev_delay two_netem two_wrong_key
       two_agent_killed"
vm_skip_unless fio jq tc python3 -- $names

out=$TMP/out
mkdir -p "$out"
build/iotrail agent --new-key "$out/agent.key" 2> "$out/key.err" &&
	build/iotrail agent --new-key "$out/other.key" 2>> "$out/key.err" ||
	{ for n in $names; do fail "$n" "cannot make the keys: $(head -n1 "$out/key.err")"; done; exit 1; }

# ---- the target guest ----
cat > "$TMP/target.sh" <<GUEST
out=$out
exec 2> \$out/target.err
# on the guest network with no key: refused, one line
build/iotrail agent --listen 10.0.9.2:4790 --key /etc/iotrail/agent.key 2> \$out/agent_nokey.err
echo \$? > \$out/agent_nokey.rc
tests/vm/nvme-tcp-loop --target 10.0.9.2 0 $DELAY_NS > \$out/target.setup || { echo failed > \$out/target.ready; exit 1; }
modprobe sch_netem
build/iotrail agent --listen 10.0.9.2:4790 --key \$out/agent.key 2> \$out/agent.log &
agent=\$!
for i in \$(seq 100); do grep -q listening \$out/agent.log && break; sleep 0.1; done
grep -q listening \$out/agent.log && echo ok > \$out/target.ready || { echo failed > \$out/target.ready; exit 1; }
while :; do
	for r in \$out/req.*; do
		case \$r in *.done|*'*') continue ;; esac
		n=\${r##*/req.}
		case \$n in
		netem-on) tc qdisc add dev eth0 root netem delay ${NETEM_MS}ms ;;
		netem-off) tc qdisc del dev eth0 root ;;
		kill-agent) kill -9 \$agent \$(pgrep -P \$agent) ;;
		stat-*) cat /sys/block/nullb_it2/stat ;; # namespace 2's disk, as the kernel counts it
		esac > \$out/did.\$n 2>&1
		mv \$r \$r.done
	done
	sleep 0.1
done
GUEST

# ---- the initiator guest ----
cat > "$TMP/initiator.sh" <<GUEST
out=$out
exec 2> \$out/initiator.err
req() { # NAME: the target does it; waits for it (30 s)
	: > \$out/req.\$1
	for i in \$(seq 300); do [ -e \$out/req.\$1.done ] && return 0; sleep 0.1; done
	echo "the target did not do \$1 within 30 s" >&2; return 1
}
for i in \$(seq 600); do [ -s \$out/target.ready ] && break; sleep 0.1; done
[ "\$(cat \$out/target.ready 2>/dev/null)" = ok ] || { echo "the target is not ready" >&2; exit 1; }
tests/vm/nvme-tcp-loop --connect 10.0.9.2 2 > \$out/setup || exit 1
. \$out/setup
modprobe sch_netem
T="--target 10.0.9.2:4790 --key \$out/agent.key --target-layers block"
rec() { # NAME DISK RW BS DEPTH NIOS [FIO OPTION...]
	local n=\$1 d=\$2 rw=\$3 bs=\$4 qd=\$5 nios=\$6
	shift 6
	build/iotrail record --layers block -o \$out/\$n.trail \$T -- \
		fio --name=\$n --filename=/dev/\$d --rw=\$rw --bs=\$bs --direct=1 --ioengine=libaio \
		    --iodepth=\$qd --number_ios=\$nios --size=256M --randrepeat=1 "\$@" \
		    --output-format=json --output=\$out/\$n.fio.json 2> \$out/\$n.err
	build/iotrail report --json \$out/\$n.trail > \$out/\$n.json 2> \$out/\$n.report.err
	build/iotrail report \$out/\$n.trail > \$out/\$n.txt 2>> \$out/\$n.report.err
}
rec read4k \$ns1 randread 4k 4 400
rec qd1 \$ns1 randread 512 1 40
req stat-before && rec dev \$ns2 randread 512 1 30 && req stat-after
req netem-on && tc qdisc add dev eth0 root netem delay ${NETEM_MS}ms && rec netem \$ns1 randread 512 1 20
tc qdisc del dev eth0 root; req netem-off
build/iotrail record -o \$out/wrong.trail --layers block --target 10.0.9.2:4790 --key \$out/other.key \
	-- true 2> \$out/wrong.err
echo \$? > \$out/wrong.rc
# killed three pulls after fio started
( for i in \$(seq 600); do pgrep -x fio > /dev/null && break; sleep 0.1; done
  sleep 3.5; req kill-agent ) &
rec killed \$ns1 randread 4k 1 100000 --time_based --runtime=6
wait
GUEST

vm two --out "$out" --timeout 600 --target-log "$out/target.console" \
	--pair "bash $TMP/target.sh" -- bash "$TMP/initiator.sh"

# ---- the checks ----
rc=$(cat "$out/agent_nokey.rc" 2>/dev/null)
n=$(grep -c . "$out/agent_nokey.err" 2>/dev/null)
if [ -n "$rc" ] && [ "$rc" != 0 ] && [ "$n" = 1 ] && grep -q "without a key" "$out/agent_nokey.err"; then
	pass "two_agent_no_key ($(cat "$out/agent_nokey.err"))"
else
	fail two_agent_no_key "exit '$rc', $n lines: $(head -c 200 "$out/agent_nokey.err" 2>/dev/null)"
fi

if [ ! -s "$out/read4k.json" ]; then
	w=$(cat "$out/initiator.err" "$out/target.err" 2>/dev/null | grep -v '^$' | head -n2 | tr '\n' '|')
	for n in two_merged two_matched two_clock two_dev_delay two_netem; do
		fail "$n" "no recording on the initiator: ${w:-$(vm_why two)}"
	done
else
	fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/read4k.fio.json" 2>/dev/null)
	# machine 0: the initiator's reads on its NVMe/TCP disk; machine 1: the
	# target's nvmet reads (every command, whatever the device)
	host_reads=$(jq -r '[.groups[] | select(.key.op == "read" and .key.layer != "fabric") | .count] | add' \
		"$out/read4k.json" 2>/dev/null)
	build/iotrail report --machine 1 --json "$out/read4k.trail" > "$out/read4k.m1.json" 2> "$out/read4k.m1.err"
	tgt_reads=$(jq -r '.nvmet.by_opcode.read.count // ([.groups[] | select(.key.op == "read") | .count] | add)' \
		"$out/read4k.m1.json" 2>/dev/null)
	hosts=$(jq -r '[.machines[].hostname] | join(",")' "$out/read4k.json" 2>/dev/null)
	if [ -n "$fio_ios" ] && [ "$fio_ios" -gt 0 ] && [ "$host_reads" = "$fio_ios" ] &&
	   [ "$tgt_reads" = "$fio_ios" ] && [ "$hosts" = iotrail-initiator,iotrail-target ]; then
		pass "two_merged (machines $hosts; fio total_ios $fio_ios = initiator reads $host_reads = target reads $tgt_reads)"
	else
		fail two_merged "fio total_ios '$fio_ios', initiator reads '$host_reads', target reads '$tgt_reads', machines '$hosts'; record: $(grep -v '^$' "$out/read4k.err" | tail -n2 | tr '\n' '|')"
	fi
fi

# ---- the join across the machines ----
fab() { # NAME JQ: from the main report's fabric view
	jq -r ".fabric | $2" "$out/$1.json" 2>/dev/null
}
if [ -s "$out/read4k.json" ]; then
	fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/read4k.fio.json" 2>/dev/null)
	read -r joined count detailed sumok uio <<< "$(fab read4k '[.cross.joined, .by_opcode.read.count,
		.detailed, .detail_sum_ok, .unmatched_io] | @tsv')"
	# the controller joined to machine 1 by both machines' NVMF records (the
	# initiator's sysfs address and subsystem, the target's nvmet port)
	ctrl=$(fab read4k '[.cross.controllers[]? | select(.machine == 1 and .joined and .traddr == "10.0.9.2")
		| "nvme\(.ctrl) \(.transport) \(.traddr):\(.trsvcid) \(.subsysnqn)"] | first // empty')
	if [ "$joined" = true ] && [ -n "$fio_ios" ] && [ "$count" = "$fio_ios" ] &&
	   [ "$detailed" = "$fio_ios" ] && [ "$sumok" = "$detailed" ] && [ "$uio" = 0 ] && [ -n "$ctrl" ]; then
		pass "two_matched (fio total_ios $fio_ios = matched across the machines $count = split to the network $detailed, parts adding up on $sumok; $ctrl -> machine 1)"
	else
		fail two_matched "joined '$joined', fio total_ios '$fio_ios', matched '$count', split '$detailed', adding up '$sumok', unmatched on I/O queues '$uio', controllers $(fab read4k '.cross.controllers | tostring'); not split: $(fab read4k '.not_detailed | tostring')"
	fi

	# every run's clock: its uncertainty (at the middle I/O: the drift of
	# two TCG guests, 90-250 ppm, is bounded loosely over a few seconds)
	# below the fastest round trip; causal but within the uncertainty at
	# worst, and at least 99.9% causal (the issue's figure; every one in 20
	# traces of this test since arrivals are the last before use)
	bad="" all=""
	for n in read4k qd1 dev netem; do
		line=$(fab $n '.cross.clock as $c | .cross.causality as $k |
			[$c.method, $c.uncertainty_mid_ns, $c.uncertainty_ns, $c.min_rtt_ns, $k.checked,
			 $k.noncausal_out + $k.noncausal_back, $k.noncausal_within_uncertainty] | @tsv')
		read -r method umid uall rtt checked noncausal within <<< "$line"
		# record stored its estimate in the file (the report says it used it),
		# and how long estimating and storing took at its end
		stored=$(fab $n '.cross.clock.stored // false')
		secs=$(sed -n "s/.*machine 1's clock stored .*(\([0-9.]*\) s to estimate and store)/\1/p" "$out/$n.err")
		all="$all $n: $method +-$((${umid:-0} / 1000)) us (anywhere $((${uall:-0} / 1000)) us), rtt $((${rtt:-0} / 1000)) us, causal $((${checked:-0} - ${noncausal:-0}))/$checked, stored in ${secs:-?} s;"
		if [ "$method" != matched-io ] || [ "$stored" != true ] || [ -z "$secs" ] ||
		   [ -z "$umid" ] || [ "$umid" -ge "$rtt" ] ||
		   [ "${checked:-0}" -eq 0 ] || [ "$noncausal" -gt "$within" ] ||
		   [ $((noncausal * 1000)) -gt "$checked" ]; then
			bad="$bad $n"
		fi
	done
	if [ -z "$bad" ]; then
		pass "two_clock ($all)"
	else
		fail two_clock "runs$bad:$all"
	fi

	# medians: a loaded host fires null_blk's timer late now and then, and
	# the virtual wire drops a frame now and then (a TCP retransmission:
	# net.back's max was 875 ms once); the averages carry those, the
	# report's max shows them
	# the target's device: namespace 2's null_blk disk completes each read
	# DELAY_NS late, and a loaded host fires that timer later still (its
	# median was 24 ms once under a CPU-bound loop beside the guests); so
	# the ground truth is the target kernel's own account of that disk
	# over the run (/sys/block/nullb_it2/stat before and after: reads, and
	# the ms they took): target.dev's count == its reads, target.dev's
	# average == its average within 5%, and that average >= DELAY_NS (the
	# delay was there). The median beside it, against DELAY_NS + qd1's.
	t0=$(fab qd1 '.by_opcode.read.stages[] | select(.name == "target.dev") | .ns.p50')
	read -r t1 tavg tn <<< "$(fab dev '.by_opcode.read.stages[] | select(.name == "target.dev") |
		"\(.ns.p50) \(.ns.avg) \(.count)"')"
	read -r _ want got off <<< "$(delay_verdict "$t0" "$t1" $DELAY_NS)"
	read -r r0 _ _ k0 _ < "$out/did.stat-before" 2>/dev/null
	read -r r1 _ _ k1 _ < "$out/did.stat-after" 2>/dev/null
	kverdict=$(awk -v r0="$r0" -v r1="$r1" -v k0="$k0" -v k1="$k1" -v avg="$tavg" -v n="$tn" \
		-v d=$DELAY_NS 'BEGIN {
		if (r0 == "" || r1 == "" || avg == "" || r1 <= r0) { print "no"; exit }
		kavg = (k1 - k0) * 1e6 / (r1 - r0); off = (avg - kavg) / kavg; if (off < 0) off = -off
		ok = n == r1 - r0 && off <= 0.05 && kavg >= d
		printf "%s %d %.1f %.1f %.3f", ok ? "ok" : "no", r1 - r0, kavg / 1000, avg / 1000, off }')
	read -r ok kn kavg oavg koff <<< "$kverdict"
	if [ "$ok" = ok ]; then
		pass "two_dev_delay (null_blk completion_nsec $DELAY_NS on the target: target.dev average $oavg us over $tn reads, the target kernel's for its disk $kavg us over $kn, off by $koff; p50 $got us, DELAY_NS + qd1's p50 $want us)"
	else
		fail two_dev_delay "target.dev average '$tavg' ns over '$tn' reads (p50 '$t1'), the target kernel's disk stat before '$r0 $k0' after '$r1 $k1' (verdict '$kverdict'), delay $DELAY_NS"
	fi

	# the network: NETEM_MS more in net.out and in net.back
	avgs() { fab "$1" '[.by_opcode.read.stages[] | select(.name == "net.out" or .name == "net.back") |
		.ns.p50] | @tsv'; }
	read -r o0 b0 <<< "$(avgs qd1)"
	read -r o1 b1 <<< "$(avgs netem)"
	verdict=$(awk -v o0="$o0" -v b0="$b0" -v o1="$o1" -v b1="$b1" -v d=$((NETEM_MS * 1000000)) 'BEGIN {
		if (o0 == "" || o1 == "" || b0 == "" || b1 == "") { print "no"; exit }
		eo = (o1 - o0 - d) / d; if (eo < 0) eo = -eo; eb = (b1 - b0 - d) / d; if (eb < 0) eb = -eb
		printf "%s %.0f %.0f", (eo <= 0.10 && eb <= 0.10) ? "ok" : "no", (o1 - o0) / 1000, (b1 - b0) / 1000 }')
	read -r ok dout dback <<< "$verdict"
	if [ "$ok" = ok ]; then
		pass "two_netem (netem ${NETEM_MS} ms on each guest's NIC: net.out p50 +$dout us, net.back p50 +$dback us)"
	else
		fail two_netem "netem ${NETEM_MS} ms each way: net.out '$o0' -> '$o1' ns, net.back '$b0' -> '$b1' ns (want each +${NETEM_MS} ms within 10%; verdict '$verdict')"
	fi
fi

rc=$(cat "$out/wrong.rc" 2>/dev/null)
n=$(grep -c . "$out/wrong.err" 2>/dev/null)
if [ -n "$rc" ] && [ "$rc" != 0 ] && [ "$n" = 1 ] && grep -q "keys differ" "$out/wrong.err" &&
   grep -q "refused a connection from 10.0.9.1:.*keys differ" "$out/agent.log" &&
   [ ! -e "$out/wrong.trail" ]; then
	pass "two_wrong_key (initiator: $(cut -c1-90 "$out/wrong.err")...; agent: refused, the keys differ; no file)"
else
	fail two_wrong_key "exit '$rc', $n lines: $(head -c 200 "$out/wrong.err" 2>/dev/null); agent: $(grep -m1 refused "$out/agent.log")"
fi

# the agent killed mid-run: the file is whole, the target's data ends early
trunc=$(jq -r '.truncated' "$out/killed.json" 2>/dev/null)
ios0=$(jq -r '.ios' "$out/killed.json" 2>/dev/null)
build/iotrail report --machine 1 --json "$out/killed.trail" > "$out/killed.m1.json" 2>/dev/null
ios1=$(jq -r '.nvmet.by_opcode.read.count // .ios' "$out/killed.m1.json" 2>/dev/null)
fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/killed.fio.json" 2>/dev/null)
warn=$(grep -c "WARNING: machine 1's data is incomplete" "$out/killed.txt" 2>/dev/null)
if [ "$trunc" = false ] && [ -n "$fio_ios" ] && [ "${ios0:-0}" -ge "$fio_ios" ] &&
   [ "${ios1:-0}" -gt 0 ] && [ "$ios1" -lt "$fio_ios" ] && [ "$warn" = 1 ] &&
   grep -q "warning: agent .* lost" "$out/killed.err"; then
	pass "two_agent_killed (initiator's file whole: $ios0 I/Os for fio's $fio_ios; the target's $ios1 reads up to its last pull; the report warns)"
else
	fail two_agent_killed "truncated '$trunc', initiator I/Os '$ios0', target reads '$ios1', fio '$fio_ios', report warnings '$warn': $(grep -m2 -E 'warning|failed' "$out/killed.err" | tr '\n' '|')"
fi
exit 0
