#!/usr/bin/env bash
# The syscall layer on Debian's stock kernel (6.1: no bpf_rdonly_cast, so
# the compat programs, syscall.bpf.c's IT_SYS_COMPAT), one boot with the
# emulated NVMe SSD:
#  - it loads at all, and says which hook it took;
#  - fio's NIOS direct 4K preads of /dev/nvme0n1 (psync) are exactly NIOS
#    pread64 records on that path, each returning 4096 and owning its one
#    block I/O (the block layer in the same recording, --dev nvme0n1);
#  - dd's COUNT 4K writes of a file and its one fsync (conv=fsync) are
#    exactly COUNT write records of 4096 bytes on the file's path, at
#    offsets 0, 4096, ..., and one fsync of it;
#  - --comm keeps one process's calls: a second dd beside it (another
#    name) leaves no record.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=300
COUNT=40
names="vm_syscall_loads vm_syscall_preads vm_syscall_preads_own_io vm_syscall_writes
       vm_syscall_fsync vm_syscall_comm"
vm_skip_unless fio jq -- $names

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/syscall.sh" <<GUEST
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
exit $FAILED
