#!/usr/bin/env bash
# NVMe/TCP over loopback (tests/vm/nvme-tcp-loop: nvme-tcp initiator ->
# nvmet-tcp target -> null_blk), one boot:
#  - the NVMe driver layer on the tcp controller: fio does exactly NIOS 4K
#    random reads on the tcp disk under `iotrail record --layers block --dev`:
#    the report's NVMe read commands on that controller == fio's total_ios;
#  - the nvmet layer records with the block layer (the trace's hook list);
#  - the fabric join on that run: every read fio made is matched to its
#    target command (matched == fio total_ios), and every matched I/O's
#    stages add up: host.out + target + host.in == S -> N (per I/O, and the
#    sums), host.block + command + host.done == Q -> C;
#  - ground truth: fio at QD1 on namespace 2, a null_blk disk whose
#    completions are delayed by DELAY_NS (irqmode=2): the target stage's
#    average is at least DELAY_NS + its average at QD1 on namespace 1 (a
#    timer is never early), and the target did not take the rest of the
#    command's time: the rest (command - target) is at least half what it
#    was without the delay. No upper bound on either: TCG fires the timer
#    late on a loaded host (6 ms in one run), which is the target's time,
#    and a starved guest stretches the initiator's side (by 13 ms at QD1
#    beside four builds);
#    recorded without --dev, so the host's admin commands (keep-alive) are
#    in it too: every I/O command of both sides is matched (an admin one
#    may have a side outside the recording: attach and detach take time);
#  - `iotrail probe --json` in the guest lists every hook of the nvme,
#    nvmet, nvme-tcp and nvmet-tcp layers with a kind or a reason, and the
#    kind agrees with what the guest's tracefs and kallsyms show.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
VM_TIMEOUT=${VM_TIMEOUT_NVME_TCP:-300} # 60 s on an idle host, 124 s beside other builds: the default 120 s cut it

NIOS=1000
DEPTH=4
DELAY_NS=20000000 # TCG fires a null_blk timer 0.3-1 ms late, 6 ms on a loaded host: see the check
NIOS_D=50
names="vm_nvme_tcp_setup vm_nvme_tcp_commands vm_nvme_tcp_nvmet_hooks vm_nvme_tcp_probe
       vm_nvme_tcp_fabric_matched vm_nvme_tcp_fabric_stages vm_nvme_tcp_fabric_delay"
vm_skip_unless fio jq -- $names

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/nvme_tcp.sh" <<GUEST
tests/vm/nvme-tcp-loop 0 $DELAY_NS > $out/setup 2> $out/setup.err || exit 0
. $out/setup
T=/sys/kernel/tracing
build/iotrail probe --json > $out/probe.json
# what the guest shows: tracepoints in tracefs, functions in kallsyms and
# in ftrace's list (fentry and kprobes attach to those)
for h in \$(jq -r '.layers[] | select(.name | test("nvme")) | .hooks[] |
		  if .type == "tracepoint" then "tp:\(.category)/\(.name)" else "fn:\(.name)" end' $out/probe.json); do
	case \$h in
	tp:*) [ -d \$T/events/\${h#tp:} ] && echo "\$h tracefs" || echo "\$h none" ;;
	fn:*) f=\${h#fn:}
	      if grep -qw "\$f" \$T/available_filter_functions; then echo "\$h ftrace"
	      elif grep -qw "\$f" /proc/kallsyms; then echo "\$h kallsyms"
	      else echo "\$h none"; fi ;;
	esac
done > $out/facts
build/iotrail record --layers block -o $out/fio.trail --dev \$ns1 -- \
	fio --name=tcp --filename=/dev/\$ns1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	    --iodepth=$DEPTH --number_ios=$NIOS --size=256M --randrepeat=1 \
	    --output-format=json --output=$out/fio.json 2> $out/record.err
build/iotrail report --json $out/fio.trail > $out/fio.report.json
build/iotrail report $out/fio.trail > $out/fio.report.txt
# one I/O at a time, so that the target stage holds no queueing: with and without the delay
for r in qd1:\$ns1 delay:\$ns2; do
	build/iotrail record --layers block -o $out/\${r%%:*}.trail -- \
		fio --name=\${r%%:*} --filename=/dev/\${r#*:} --rw=randread --bs=4k --direct=1 \
		    --ioengine=libaio --iodepth=1 --number_ios=$NIOS_D --size=256M --randrepeat=1 \
		    --output-format=json --output=$out/\${r%%:*}.json 2> $out/\${r%%:*}.err
	build/iotrail report --json $out/\${r%%:*}.trail > $out/\${r%%:*}.report.json
done
GUEST
vm vm_nvme_tcp --out "$out" -- bash "$TMP/nvme_tcp.sh"

ctrl=$(sed -n 's/^ctrl=//p' "$out/setup" 2>/dev/null)
ns1=$(sed -n 's/^ns1=//p' "$out/setup" 2>/dev/null)
ns2=$(sed -n 's/^ns2=//p' "$out/setup" 2>/dev/null)
cntlid=$(sed -n 's/^cntlid=//p' "$out/setup" 2>/dev/null)
if [ -z "$ns1" ]; then
	w=$(head -n1 "$out/setup.err" 2>/dev/null)
	for n in $names; do fail "$n" "no NVMe/TCP disk in the guest: ${w:-$(vm_why vm_nvme_tcp)}"; done
	exit 1
fi
pass "vm_nvme_tcp_setup (controller $ctrl, cntlid $cntlid, namespace 1 is $ns1 on null_blk)"

# ---- the NVMe driver layer on the tcp controller ----
R=$out/fio.report.json
fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/fio.json" 2>/dev/null)
inst=${ctrl#nvme}
reads=$(jq -r --argjson c "$inst" '[.nvme.queues[]? | select(.ctrl == $c and .qid > 0) | .commands] | add // 0' "$R" 2>/dev/null)
byop=$(jq -r '.nvme.by_opcode.read.count // 0' "$R" 2>/dev/null)
if [ "$fio_ios" = "$NIOS" ] && [ "$reads" = "$fio_ios" ] && [ "$byop" = "$fio_ios" ]; then
	pass "vm_nvme_tcp_commands (fio total_ios $fio_ios, NVMe read commands $byop, on $ctrl's I/O queues $reads)"
else
	fail vm_nvme_tcp_commands "fio total_ios '$fio_ios' (want $NIOS), NVMe read commands '$byop', on $ctrl's I/O queues '$reads'; record: $(head -c 300 "$out/record.err" 2>/dev/null)"
fi

hooks=$(jq -r '.host.hooks' "$R" 2>/dev/null)
case ";$hooks;" in
	*\;nvmet=tp_btf*|*\;nvmet=raw_tp*) pass "vm_nvme_tcp_nvmet_hooks ($hooks)" ;;
	*) fail vm_nvme_tcp_nvmet_hooks "hooks '$hooks' have no nvmet layer; record: $(grep -m1 nvmet "$out/record.err")" ;;
esac

# ---- iotrail probe against tracefs and kallsyms ----
P=$out/probe.json
bad=
rows=0
while read -r layer type cat name hook why; do
	rows=$((rows + 1))
	if [ "$type" = tracepoint ]; then
		fact=$(awk -v h="tp:$cat/$name" '$1 == h { print $2; exit }' "$out/facts")
		# a tracepoint in tracefs is hooked (tp_btf, raw_tp or tracepoint); one not there has a reason
		case "$fact:$hook" in
		tracefs:tp_btf|tracefs:raw_tp|tracefs:tracepoint) ;;
		none:none) [ "$why" != - ] || bad="$bad $layer/$name(no reason)" ;;
		*) bad="$bad $layer/$name($fact,$hook)" ;;
		esac
	else
		fact=$(awk -v h="fn:$name" '$1 == h { print $2; exit }' "$out/facts")
		# ftrace lists it: fentry or kprobe; only kallsyms: kprobe or none; neither: none with a reason
		case "$fact:$hook" in
		ftrace:fentry|ftrace:kprobe|kallsyms:kprobe) ;;
		kallsyms:none|none:none) [ "$why" != - ] || bad="$bad $layer/$name(no reason)" ;;
		*) bad="$bad $layer/$name($fact,$hook)" ;;
		esac
	fi
done < <(jq -r '.layers[] | select(.name | test("nvme")) | .name as $l | .hooks[] |
	[$l, .type, (.category // "-"), .name, .hook, (if .why == "" then "-" else (.why | gsub(" "; "_")) end)] | @tsv' "$P" 2>/dev/null)
layers=$(jq -r '[.layers[] | select(.name | test("nvme")) | .name] | join(",")' "$P" 2>/dev/null)
summary=$(jq -r '[.layers[] | select(.name | test("nvme-tcp|nvmet")) | .hooks[] | "\(.name)=\(.hook)"] | join(" ")' "$P" 2>/dev/null)
case ",$layers," in *,nvme-tcp,*) ;; *) bad="$bad no-nvme-tcp-layer" ;; esac
case ",$layers," in *,nvmet-tcp,*) ;; *) bad="$bad no-nvmet-tcp-layer" ;; esac
case ",$layers," in *,nvmet,*) ;; *) bad="$bad no-nvmet-layer" ;; esac
if [ -z "$bad" ] && [ "$rows" -gt 0 ]; then
	pass "vm_nvme_tcp_probe ($rows hooks of $layers agree with tracefs/kallsyms: $summary)"
else
	fail vm_nvme_tcp_probe "$rows hooks of '$layers'; disagreeing:$bad"
fi

# ---- the fabric join ----
# matched reads == fio's; what is unmatched, by reason, in the PASS line
read -r matched fmatched uhost utarget uio reasons <<< "$(jq -r '[.fabric.by_opcode.read.count // 0, .fabric.matched,
	.fabric.unmatched_host, .fabric.unmatched_target, .fabric.unmatched_io,
	([.fabric.unmatched | to_entries[] | select(.value > 0) | "\(.key)=\(.value)"] | join(",") | if . == "" then "none" else . end)] | @tsv' "$R" 2>/dev/null)"
# (admin commands may be unmatched: --dev leaves them out on the host)
if [ "$matched" = "$fio_ios" ] && [ "$uio" = 0 ]; then
	pass "vm_nvme_tcp_fabric_matched (fio total_ios $fio_ios, reads matched $matched, all commands matched $fmatched; unmatched: on I/O queues $uio, host $uhost, target $utarget: $reasons)"
else
	fail vm_nvme_tcp_fabric_matched "fio total_ios $fio_ios, reads matched '$matched', unmatched on I/O queues '$uio', host '$uhost' target '$utarget' ($reasons)"
fi

# per I/O (stage_sum_ok, io_sum_ok) and in the sums of the stages
read -r sumok iook trail parts cmd blk io avgs <<< "$(jq -r '.fabric as $f | $f.by_opcode.read as $r |
	($r.stages | map({(.name): .}) | add) as $s |
	[$f.stage_sum_ok, $f.io_sum_ok, $r.with_trail,
	 ($s["host.out"].sum_ns + $s.target.sum_ns + $s["host.in"].sum_ns), $s.command.sum_ns,
	 ($s["host.block"].sum_ns + $s.command.sum_ns + $s["host.done"].sum_ns), $s.io.sum_ns,
	 ([$r.stages[] | "\(.name)=\(.ns.avg / 1000 | floor)us"] | join(","))] | @tsv' "$R" 2>/dev/null)"
if [ "$sumok" = "$fmatched" ] && [ "$iook" = "$matched" ] && [ "$trail" = "$matched" ] &&
   [ -n "$parts" ] && [ "$parts" = "$cmd" ] && [ "$blk" = "$io" ]; then
	pass "vm_nvme_tcp_fabric_stages (host.out+target+host.in == S->N on $sumok of $fmatched, block stages on $iook reads; sums $parts = $cmd ns, $blk = $io ns; avg $avgs)"
else
	fail vm_nvme_tcp_fabric_stages "stage sums ok $sumok of $fmatched, io sums ok $iook, with trail $trail of $matched reads; parts $parts vs command $cmd, block+command $blk vs io $io"
fi

# ground truth: the null_blk delay lands in the target stage
D=$out/delay.report.json
dfio=$(jq -r '.jobs[0].read.total_ios' "$out/delay.json" 2>/dev/null)
read -r dmatched dall dun dio admin t0 t1 c0 c1 <<< "$(jq -r --slurp '[.[1].fabric.by_opcode.read.count // 0,
	.[1].fabric.matched, (.[1].fabric.unmatched_host + .[1].fabric.unmatched_target),
	.[1].fabric.unmatched_io,
	([.[1].fabric.by_opcode[] | select(.admin) | .count] | add // 0),
	(.[0].fabric.by_opcode.read.stages[] | select(.name == "target") | .ns.avg),
	(.[1].fabric.by_opcode.read.stages[] | select(.name == "target") | .ns.avg),
	(.[0].fabric.by_opcode.read.stages[] | select(.name == "command") | .ns.avg),
	(.[1].fabric.by_opcode.read.stages[] | select(.name == "command") | .ns.avg)] | @tsv' \
	"$out/qd1.report.json" "$D" 2>/dev/null)"
verdict=$(awk -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v d=$DELAY_NS 'BEGIN {
	if (t0 == "" || t1 == "" || c0 == "" || c1 == "" || c1 <= c0) { print "no"; exit }
	want = d + t0; rest = (c1 - t1) / (c0 - t0)
	ok = t1 >= 0.99 * want && rest >= 0.5
	printf "%s %.1f %.1f %.3f", ok ? "ok" : "no",
		want / 1000, t1 / 1000, rest }')
if [ "$dfio" = "$NIOS_D" ] && [ "$dmatched" = "$dfio" ] && [ "$dio" = 0 ] && [ "${verdict%% *}" = ok ]; then
	read -r _ want got off <<< "$verdict"
	pass "vm_nvme_tcp_fabric_delay (null_blk completion_nsec $DELAY_NS on $ns2: target avg $got us >= $DELAY_NS ns + no-delay target avg $((t0 / 1000)) us = $want us; the rest of the command (command $((c0 / 1000)) -> $((c1 / 1000)) us) is $off of what it was (want >= 0.5); $dmatched of $dfio reads matched, $dall commands in all with $admin admin; unmatched: $dio on I/O queues, $dun in all)"
else
	fail vm_nvme_tcp_fabric_delay "fio total_ios '$dfio', reads matched '$dmatched', all matched '$dall', unmatched '$dun' ('$dio' on I/O queues), target avg no delay '$t0' ns, with delay '$t1' ns (want >= $DELAY_NS + the first), command avg '$c0' -> '$c1' ns (the rest, command - target, want >= 0.5 of what it was; verdict '$verdict')"
fi
exit 0
