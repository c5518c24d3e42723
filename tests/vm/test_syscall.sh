#!/usr/bin/env bash
# The syscall layer on Debian's stock kernel (6.1: no bpf_rdonly_cast, so
# the compat programs, syscall.bpf.c's IT_SYS_COMPAT), one boot with the
# emulated NVMe SSD:
#  - it loads at all, and says which hook it took; `iotrail probe` calls
#    the layer usable and names io_uring's submission hook as this kernel
#    does (io_uring_submit_sqe on 6.1), usable;
#  - fio's NIOS direct 4K preads of /dev/nvme0n1 (psync) are exactly NIOS
#    pread64 records on that path, each returning 4096 and owning its one
#    block I/O (the block layer in the same recording, --dev nvme0n1);
#  - dd's COUNT 4K writes of a file and its one fsync (conv=fsync) are
#    exactly COUNT write records of 4096 bytes on the file's path, at
#    offsets 0, 4096, ..., and one fsync of it;
#  - --comm keeps one process's calls: a second dd beside it (another
#    name) leaves no record;
#  - io_uring (6.1 names the submission's tracepoint io_uring_submit_sqe
#    and gives io_uring_complete other arguments): fio's UR io_uring 4K
#    reads are exactly UR uring_read records on /dev/nvme0n1 of 4096
#    bytes each, under --comm fio (a completion is kept by its
#    submitter's process, read from the request), every completion
#    joined with its submission in the recorder (none without one, none
#    left waiting or thrown out);
#  - and under --filter 'op=read && size>=32k' (issue 14: the decision
#    follows an I/O into the request that queued it) over fio's U1 4K and
#    U2 64K io_uring reads: exactly U2 requests and U2 I/Os recorded, the
#    kernel's counts U2 requests kept and U1 left out.
#  - -p of a process with threads there before the recorder, made after,
#    and a forked child's (tests/progs/thread_calls): each of its seven
#    threads' TC pread64 calls, exactly, with the threads in scope marked
#    at the start (the task iterator runs on this kernel too).
#  - every call of the call table this architecture has, made once by
#    tests/progs/every_call (each failing at once), recorded once each:
#    the table's numbers and decoding on this kernel's programs.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=300
COUNT=40
UR=200 U1=150 U2=60
TC=300
names="vm_syscall_loads vm_syscall_probe vm_syscall_preads vm_syscall_preads_own_io vm_syscall_writes
       vm_syscall_fsync vm_syscall_comm vm_syscall_uring vm_syscall_uring_filter vm_probe_untraced
       vm_syscall_pid_threads vm_syscall_every_call"
vm_skip_unless fio jq -- $names

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/syscall.sh" <<GUEST
build/iotrail probe --json > $out/probe.json 2> $out/probe.err
# the stock kernel hides no thread from its probes: probe --untraced and
# ftrace both find none (the host's kernel does hide some: test_probe.sh)
bash tests/integration/untraced_check.sh build/iotrail /tmp vm_probe_untraced > $out/untraced.verdict 2>&1
ls /sys/kernel/tracing/events/io_uring > $out/uring_tracepoints
build/iotrail record --layers syscall,block --dev nvme0n1 -o $out/fio.trail -- \
	fio --name=sys --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --ioengine=psync \
	    --number_ios=$NIOS --size=64M --output-format=json --output=$out/fio.json 2> $out/fio.err
build/iotrail report --json --events $out/fio.trail > $out/fio.events.json
mkdir -p /tmp/systest
build/iotrail record --layers syscall --path /tmp/systest -o $out/dd.trail -- \
	dd if=/dev/zero of=/tmp/systest/f bs=4k count=$COUNT conv=fsync 2> $out/dd.err
build/iotrail report --json --events $out/dd.trail > $out/dd.events.json
cp \$(command -v dd) /tmp/othercp
build/iotrail record --layers syscall --comm dd --path /tmp/systest -o $out/comm.trail -- sh -c \
	'/tmp/othercp if=/dev/zero of=/tmp/systest/g bs=4k count=7 2>/dev/null;
	 dd if=/dev/zero of=/tmp/systest/h bs=4k count=5 2>/dev/null' 2> $out/comm.err
build/iotrail report --json --events $out/comm.trail > $out/comm.events.json
build/iotrail record -v --layers syscall,block --dev nvme0n1 --comm fio -o $out/uring.trail -- \
	fio --name=ur --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
	    --iodepth=4 --number_ios=$UR --size=64M --output-format=json --output=$out/uring.json \
	    2> $out/uring.err
build/iotrail report --json --events $out/uring.trail > $out/uring.events.json
echo 2 > /sys/block/nvme0n1/queue/nomerges
build/iotrail record --layers syscall,block --dev nvme0n1 --filter 'op=read && size>=32k' \
	-o $out/ufilter.trail -- \
	fio --filename=/dev/nvme0n1 --rw=randread --direct=1 --ioengine=io_uring --iodepth=4 \
	    --size=64M --output-format=json --output=$out/ufilter.json \
	    --name=u4 --bs=4k --number_ios=$U1 --name=u64 --stonewall --bs=64k --number_ios=$U2 \
	    2> $out/ufilter.err
build/iotrail report --json $out/ufilter.trail > $out/ufilter.report.json
build/iotrail record --layers syscall -o $out/every.trail -- build/tests/every_call \
	> $out/every.made 2> $out/every.err
echo \$? > $out/every.rc
build/iotrail report --json --events $out/every.trail > $out/every.events.json
head -c 4096 /dev/urandom > /tmp/tc.data
build/tests/thread_calls $out/tc.tids /tmp/tc.go /tmp/tc.data $TC &
tc=\$!
for _ in \$(seq 1 200); do [ -s $out/tc.tids ] && break; sleep 0.05; done
build/iotrail record -v --layers syscall -p \$tc -o $out/tc.trail -- \
	sh -c "touch /tmp/tc.go; while kill -0 \$tc 2>/dev/null; do sleep 0.05; done" 2> $out/tc.err
wait \$tc
echo \$? > $out/tc.rc
build/iotrail report --json --events $out/tc.trail > $out/tc.events.json
GUEST
vm vm_syscall --nvme --out "$out" -- bash "$TMP/syscall.sh"
E=$out/fio.events.json
if [ ! -s "$E" ]; then
	for n in $names; do
		fail "$n" "no report from the guest: $(grep -v '^libbpf' "$out/fio.err" 2>/dev/null | tail -n1) ($(vm_why vm_syscall))"
	done
	exit 1
fi

hooks=$(jq -r '.host.hooks' "$E")
kernel=$(jq -r '.host.kernel' "$E")
case "$hooks" in
	*syscall=tp_btf*|*syscall=raw_tp*|*syscall=tracepoint*)
		pass "vm_syscall_loads (kernel $kernel: $hooks)" ;;
	*) fail vm_syscall_loads "hooks '$hooks' on $kernel have no syscall layer; record said: $(tail -n1 "$out/fio.err")" ;;
esac

P=$out/probe.json
layer=$(jq -r '.layers[] | select(.name == "syscall") | .available' "$P" 2>/dev/null)
sub=$(jq -r '.layers[] | select(.name == "syscall") | .hooks[] | select(.name | startswith("io_uring_submit")) |
	"\(.name)=\(.hook)"' "$P" 2>/dev/null)
has_tp=$(jq -r '.layers[] | select(.name == "syscall") | .hooks[] | select(.name | startswith("io_uring_submit")) |
	.name' "$P" 2>/dev/null)
if [ "$layer" = yes ] && [ "$sub" = "$has_tp=tp_btf" ] && [ -n "$has_tp" ] &&
   grep -qx "$has_tp" "$out/uring_tracepoints"; then
	pass "vm_syscall_probe (syscall layer usable; $sub, a tracepoint of this kernel)"
else
	fail vm_syscall_probe "probe: syscall available '$layer', io_uring submission hook '$sub'; $(head -c 200 "$out/probe.err")"
fi

verdict=$(grep -m1 -E '^(PASS|FAIL|SKIP) vm_probe_untraced' "$out/untraced.verdict")
case "$verdict" in
	PASS*|SKIP*) echo "$verdict" ;;
	FAIL*) echo "$verdict"; FAILED=1 ;;
	*) fail vm_probe_untraced "no verdict from the guest: $(tail -n1 "$out/untraced.verdict")" ;;
esac

want=$(jq '.jobs[0].read.total_ios' "$out/fio.json" 2>/dev/null)
sel='[.events[] | select(.call == "pread64" and .comm == "fio" and (.path | endswith("/dev/nvme0n1")))]'
n=$(jq "$sel | length" "$E")
n4k=$(jq "$sel | map(select(.ret == 4096 and .count == 4096)) | length" "$E")
if [ -n "$want" ] && [ "$want" -eq "$NIOS" ] && [ "$n" = "$want" ] && [ "$n4k" = "$want" ]; then
	pass "vm_syscall_preads ($n pread64 records of 4096 bytes on /dev/nvme0n1 == fio's total_ios $want)"
else
	fail vm_syscall_preads "pread64 records on /dev/nvme0n1 $n ($n4k of 4096 bytes), fio total_ios '$want', want $NIOS"
fi
own=$(jq "$sel | map(select(.block_ios == 1)) | length" "$E")
ios=$(jq '.ios' "$E")
if [ "$own" = "$want" ] && [ "$ios" = "$want" ]; then
	pass "vm_syscall_preads_own_io (each of the $own preads owns exactly one of the block layer's $ios I/Os)"
else
	fail vm_syscall_preads_own_io "preads owning one block I/O: $own of $n; block I/Os $ios; want $want"
fi

D=$out/dd.events.json
wsel='[.events[] | select(.call == "write" and .comm == "dd" and (.path | endswith("/tmp/systest/f")))]'
w=$(jq "$wsel | length" "$D" 2>/dev/null)
w4k=$(jq "$wsel | map(select(.ret == 4096)) | length" "$D" 2>/dev/null)
offs=$(jq -r "$wsel | map(.offset) | join(\",\")" "$D" 2>/dev/null)
want_offs=$(seq 0 4096 $((4096 * (COUNT - 1))) | paste -sd,)
if [ "$w" = "$COUNT" ] && [ "$w4k" = "$COUNT" ] && [ "$offs" = "$want_offs" ]; then
	pass "vm_syscall_writes ($w writes of 4096 bytes at offsets 0..$((4096 * (COUNT - 1))), as dd did)"
else
	fail vm_syscall_writes "writes of /tmp/systest/f: $w ($w4k of 4096 bytes), offsets '$offs'; want $COUNT at '$want_offs'"
fi
s=$(jq '[.events[] | select(.call == "fsync" and (.path | endswith("/tmp/systest/f")))] | length' "$D" 2>/dev/null)
if [ "$s" = 1 ]; then
	pass "vm_syscall_fsync (dd's conv=fsync: one fsync of the file)"
else
	fail vm_syscall_fsync "fsync records of /tmp/systest/f: '$s', want 1"
fi

C=$out/comm.events.json
h=$(jq '[.events[] | select(.call == "write" and (.path | endswith("/tmp/systest/h")))] | length' "$C" 2>/dev/null)
others=$(jq '[.events[] | select(.comm != "dd")] | length' "$C" 2>/dev/null)
g=$(jq '[.events[] | select(.path | endswith("/tmp/systest/g"))] | length' "$C" 2>/dev/null)
if [ "$h" = 5 ] && [ "$others" = 0 ] && [ "$g" = 0 ]; then
	pass "vm_syscall_comm (--comm dd: dd's 5 writes, none of the 7 of the same program under another name)"
else
	fail vm_syscall_comm "--comm dd: writes of h '$h' (want 5), records of other processes '$others', of g '$g' (want 0)"
fi
U=$out/uring.events.json
want=$(jq '.jobs[0].read.total_ios' "$out/uring.json" 2>/dev/null)
usel='[.events[] | select(.call == "uring_read" and (.path | endswith("/dev/nvme0n1")))]'
n=$(jq "$usel | length" "$U" 2>/dev/null)
n4k=$(jq "$usel | map(select(.ret == 4096 and .count == 4096)) | length" "$U" 2>/dev/null)
join=$(sed -n 's/.*io_uring requests: \([0-9]*\) completions without their submission, [0-9]* outside --path, \([0-9]*\) submissions still waiting, \([0-9]*\) thrown out.*/\1 \2 \3/p' "$out/uring.err")
if [ "$want" = "$UR" ] && [ "$n" = "$UR" ] && [ "$n4k" = "$UR" ] && [ "$join" = "0 0 0" ]; then
	pass "vm_syscall_uring ($n uring_read records of 4096 bytes on /dev/nvme0n1 == fio's total_ios, under --comm fio; every completion joined with its submission)"
else
	fail vm_syscall_uring "uring_read records on /dev/nvme0n1 '$n' ($n4k of 4096 bytes), fio total_ios '$want', want $UR; completions without submission, submissions waiting, thrown out: '$join' (want 0 0 0); record said: $(grep -v '^libbpf' "$out/uring.err" | tail -n1)"
fi

F=$out/ufilter.report.json
read -r reqs ios kept left < <(jq -r '[([.syscalls[] | select(.name | startswith("uring_")) | .count] | add // 0),
	([.groups[].count] | add // 0), .task.uring_kept,
	(.task.uring_not_kept + .task.uring_no_io + .task.uring_async)] | @tsv' "$F" 2>/dev/null)
did=$(jq -r '[.jobs[].read.total_ios] | join(" ")' "$out/ufilter.json" 2>/dev/null)
if [ "$did" = "$U1 $U2" ] && [ "$reqs" = "$U2" ] && [ "$ios" = "$U2" ] && [ "$kept" = "$U2" ] &&
   [ "$left" = "$U1" ]; then
	pass "vm_syscall_uring_filter (--filter: $reqs io_uring requests and $ios I/Os == fio's $U2 64K reads; the kernel counted $kept kept, $left left out)"
else
	fail vm_syscall_uring_filter "fio did '$did' (want $U1 $U2); recorded $reqs requests, $ios I/Os; kernel counts kept '$kept' left out '$left'; record said: $(grep -v '^libbpf' "$out/ufilter.err" | tail -n1)"
fi
T=$out/tc.events.json
got=$(jq -r '[.events[] | select(.call == "pread64" and (.path | endswith("/tmp/tc.data")))] | group_by(.tid) |
	.[] | "\(.[0].tid) \(length)"' "$T" 2>/dev/null)
threads=$(echo "$got" | grep -c " $TC\$")
others=$(echo "$got" | grep -vc " $TC\$")
olds=0
for t in $(cat "$out/tc.tids" 2>/dev/null); do echo "$got" | grep -q "^$t $TC\$" && olds=$((olds + 1)); done
marked=$(sed -n 's/.*syscall: \([0-9]*\) threads in scope marked at the start.*/\1/p' "$out/tc.err")
if [ "$(cat "$out/tc.rc" 2>/dev/null)" = 0 ] && [ "$threads" = 7 ] && [ "$others" = 0 ] &&
   [ "$olds" = 2 ] && [ "$marked" = 3 ]; then
	pass "vm_syscall_pid_threads (-p: 7 threads x $TC pread64 calls, 2 of them there before the recorder, 3 threads marked at the start)"
else
	fail vm_syscall_pid_threads "per thread (tid calls): $(echo $got); want 7 of $TC with the old $(cat "$out/tc.tids" 2>/dev/null); marked at the start '$marked', want 3; exit $(cat "$out/tc.rc" 2>/dev/null); record said: $(grep -v '^libbpf' "$out/tc.err" | tail -n1)"
fi
sort "$out/every.made" > "$out/every.want" 2>/dev/null
jq -r -f tests/integration/every_call.jq "$out/every.events.json" 2>/dev/null | sort > "$out/every.got"
made=$(wc -l < "$out/every.want")
if [ "$(cat "$out/every.rc" 2>/dev/null)" = 0 ] && [ "$made" -ge 40 ] && diff -q "$out/every.want" "$out/every.got" > /dev/null; then
	pass "vm_syscall_every_call ($made calls of the table, each made once and recorded once)"
else
	fail vm_syscall_every_call "made $made calls (exit $(cat "$out/every.rc" 2>/dev/null)); made but not recorded, recorded but not made: $(diff "$out/every.want" "$out/every.got" | grep '^[<>]' | head -6 | tr '\n' ' '); record said: $(grep -v '^libbpf' "$out/every.err" | tail -n1)"
fi
exit $FAILED
