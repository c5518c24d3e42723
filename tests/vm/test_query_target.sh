#!/usr/bin/env bash
# iotrail query on an NVMe/TCP target (tests/vm/nvme-tcp-loop: nvme-tcp
# initiator -> nvmet-tcp target over loopback -> null_blk), one boot: an
# agent in the guest records the block layer (its null_blk) and with it the
# nvmet layer for a session (record --target) while fio reads NIOS 4K blocks at QD1 from namespace 1, a
# null_blk disk whose completions are delayed by DELAY_NS. Then LOAD of the
# target's switches over a window covering the run:
#  - target.dev's count for the initiator's controller (ctrl=cntlid) and
#    op=read == fio's total_ios (no host side is fed to the query's join:
#    every command is the target's alone);
#  - target.dev's average is the injected delay, within 10% (TCG fires a
#    null_blk timer up to about 1 ms late);
#  - target (parsed -> completed) holds target.dev: its average is not
#    below it.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=50
DELAY_NS=20000000
VM_TIMEOUT=${VM_TIMEOUT_QUERY:-300} # two recorders load their BPF under TCG
names="vm_query_setup vm_query_target_count vm_query_target_delay vm_query_target_total"
why=$(vm_blocker)
[ -z "$why" ] && ! command -v fio >/dev/null && why="fio is not installed (scripts/install-deps.sh)"
[ -z "$why" ] && ! command -v jq >/dev/null && why="jq is not installed (scripts/install-deps.sh)"
[ -z "$why" ] && [ ! -x build/iotrail ] && why="build/iotrail is not built (make)"
if [ -n "$why" ]; then
	skip_all "$why" $names
	exit 0
fi

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/query.sh" <<GUEST
tests/vm/nvme-tcp-loop $DELAY_NS > $out/setup 2> $out/setup.err || exit 0
. $out/setup
build/iotrail agent --new-key $out/k.key 2> /dev/null
build/iotrail agent --key $out/k.key --listen 127.0.0.1:4791 2> $out/agent.log &
agent=\$!
for i in \$(seq 100); do grep -q listening $out/agent.log && break; sleep 0.1; done
build/iotrail record -o $out/s.trail --layers block --dev \$ns1 --target 127.0.0.1:4791 \
	--key $out/k.key --target-layers block --target-dev \$nullb1 -- \
	sh -c "while [ ! -e $out/stop ]; do sleep 0.1; done" 2> $out/record.err &
rec=\$!
for i in \$(seq 600); do grep -q "recording, hooks" $out/record.err && break; sleep 0.1; done
grep -q "recording, hooks" $out/record.err || { kill \$rec \$agent; exit 0; }
fio --name=q --filename=/dev/\$ns1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	--iodepth=1 --number_ios=$NIOS --size=256M --output-format=json --output=$out/fio.json
sleep 1.5
build/iotrail query --target 127.0.0.1:4791 --key $out/k.key --json \
	"load target.dev window=600s ctrl=\$cntlid op=read" "load target window=600s ctrl=\$cntlid" \
	> $out/q.json 2> $out/q.err
touch $out/stop
wait \$rec
kill \$agent
wait \$agent
GUEST
vm vm_query --out "$out" -- bash "$TMP/query.sh"

ns1=$(sed -n 's/^ns1=//p' "$out/setup" 2>/dev/null)
cntlid=$(sed -n 's/^cntlid=//p' "$out/setup" 2>/dev/null)
if [ -z "$ns1" ] || [ ! -s "$out/q.json" ]; then
	w=$(head -n1 "$out/setup.err" 2>/dev/null)
	[ -z "$w" ] && w=$(head -n1 "$out/q.err" 2>/dev/null)
	[ -z "$w" ] && w=$(grep -m1 -E 'failed|cannot' "$out/record.err" 2>/dev/null)
	for n in $names; do fail "$n" "no answer from the guest's agent: ${w:-$(vm_why vm_query)}"; done
	exit 1
fi
pass "vm_query_setup (namespace 1 is $ns1, initiator controller $cntlid)"

fio_ios=$(jq -r '.jobs[0].read.total_ios' "$out/fio.json" 2>/dev/null)
count=$(jq -r '.answers[0].window.count' "$out/q.json")
ios=$(jq -r '.answers[0].window.ios' "$out/q.json")
if [ "$fio_ios" = "$NIOS" ] && [ "$count" = "$fio_ios" ] && [ "$ios" = "$fio_ios" ]; then
	pass "vm_query_target_count (target.dev count $count == fio total_ios $fio_ios)"
else
	fail vm_query_target_count "target.dev count '$count' ios '$ios', fio total_ios '$fio_ios' (want $NIOS)"
fi

avg=$(jq -r '.answers[0].window.avg_ns' "$out/q.json")
if awk -v a="$avg" -v d="$DELAY_NS" 'BEGIN { exit !(a >= d && a <= d * 1.1) }'; then
	pass "vm_query_target_delay (target.dev average $avg ns, injected $DELAY_NS ns)"
else
	fail vm_query_target_delay "target.dev average '$avg' ns, injected $DELAY_NS ns (want within +10%)"
fi

tavg=$(jq -r '.answers[1].window.avg_ns' "$out/q.json")
tcount=$(jq -r '.answers[1].window.count' "$out/q.json")
if [ "$tcount" = "$fio_ios" ] && [ -n "$tavg" ] && [ "$tavg" -ge "$avg" ]; then
	pass "vm_query_target_total (target: $tcount commands, average $tavg ns >= target.dev's)"
else
	fail vm_query_target_total "target count '$tcount' average '$tavg' (target.dev $avg)"
fi
exit $((FAILED))
