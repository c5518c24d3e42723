#!/usr/bin/env bash
# Module loading (run --modules): nvme-tcp, nvmet-tcp, null_blk (with
# parameters), f2fs, sch_netem and sch_tbf load with their dependencies; a
# loopback NVMe/TCP connection set up through configfs and /dev/nvme-fabrics
# (no nvme-cli) makes the target's null_blk namespace appear as an NVMe
# namespace; the nvmet tracepoints exist; null_blk makes a zoned device
# through its configfs; netem and tbf attach to lo and NVMe/TCP still works;
# `iotrail cost --op dm-crypt` maps, reads through and removes dm-crypt.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

names="vm_modules_load vm_module_params vm_nvme_tcp_loopback vm_nvmet_tracepoints
       vm_null_blk_zoned vm_netem_tbf vm_f2fs vm_cost_dm_crypt"
why=$(vm_blocker)
if [ -n "$why" ]; then
	skip_all "$why" $names
	exit 0
fi

cat > "$TMP/modules.sh" <<'EOF'
for m in nvme_tcp nvmet_tcp nvmet nvme_fabrics null_blk f2fs sch_netem sch_tbf configfs; do
	test -d /sys/module/$m || echo "not_loaded=$m"
done
echo "null_blk_gb=$(cat /sys/module/null_blk/parameters/gb)"
echo "null_blk_bs=$(cat /sys/block/nullb0/queue/logical_block_size)"

# NVMe/TCP over loopback: null_blk nullb0 exported by nvmet-tcp on 127.0.0.1
nqn=nqn.2024-01.io.iotrail:vmtest
c=/sys/kernel/config/nvmet
(
	set -e
	mkdir $c/subsystems/$nqn
	echo 1 > $c/subsystems/$nqn/attr_allow_any_host
	mkdir $c/subsystems/$nqn/namespaces/1
	echo /dev/nullb0 > $c/subsystems/$nqn/namespaces/1/device_path
	echo 1 > $c/subsystems/$nqn/namespaces/1/enable
	mkdir $c/ports/1
	echo tcp > $c/ports/1/addr_trtype
	echo ipv4 > $c/ports/1/addr_adrfam
	echo 127.0.0.1 > $c/ports/1/addr_traddr
	echo 4420 > $c/ports/1/addr_trsvcid
	ln -s $c/subsystems/$nqn $c/ports/1/subsystems/$nqn
	echo "transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=$nqn" > /dev/nvme-fabrics
) 2>&1 | sed 's/^/setup_error=/'
for i in $(seq 100); do [ -e /sys/block/nvme0n1 ] && break; sleep 0.1; done
echo "tcp_ns=$(test -b /dev/nvme0n1 && echo ok)"
echo "tcp_transport=$(cat /sys/class/nvme/nvme0/transport 2>/dev/null)"
echo "tcp_subsysnqn=$(cat /sys/class/nvme/nvme0/subsysnqn 2>/dev/null)"
echo "tcp_size=$(cat /sys/block/nvme0n1/size 2>/dev/null) nullb_size=$(cat /sys/block/nullb0/size)"
dd if=/dev/nvme0n1 of=/dev/null bs=64k count=16 iflag=direct status=none && echo "tcp_read=ok"
for e in nvmet_req_init nvmet_req_complete; do
	test -d /sys/kernel/tracing/events/nvmet/$e && echo "tp_$e=ok"
done

# a zoned null_blk device through null_blk's configfs
z=/sys/kernel/config/nullb/nullbz
mkdir $z && echo 1 > $z/zoned && echo 4 > $z/zone_size && echo 64 > $z/size &&
	echo 1 > $z/memory_backed && echo 1 > $z/power
# (the disk takes the configfs directory's name)
echo "zoned_nullb=$(cat /sys/block/nullbz/queue/zoned 2>/dev/null) zones=$(cat /sys/block/nullbz/queue/nr_zones 2>/dev/null)"

# the NVMe/TCP connection keeps working through netem, then through tbf
tc qdisc add dev lo root netem delay 1ms 2>&1 | sed 's/^/tc_error=/'
timeout 20 dd if=/dev/nvme0n1 of=/dev/null bs=64k count=16 skip=16 iflag=direct status=none &&
	echo "netem_read=ok"
# tbf's burst must hold a whole packet, and lo's MTU is 64 KiB
tc qdisc replace dev lo root tbf rate 1gbit burst 256kb latency 50ms 2>&1 | sed 's/^/tc_error=/'
timeout 20 dd if=/dev/nvme0n1 of=/dev/null bs=64k count=16 skip=32 iflag=direct status=none &&
	echo "tbf_read=ok"
echo "qdisc=$(tc qdisc show dev lo | awk '{print $2}' | tr '\n' ' ')"
grep -qw f2fs /proc/filesystems && echo "f2fs=ok"

# iotrail cost --op dm-crypt: a mapping over each of its loop devices, read
# in the with arm; nothing left after (the host kernel has no device-mapper)
tc qdisc del dev lo root 2>/dev/null
build/iotrail cost --op dm-crypt --sizes 4k --runs 1 --seconds 1 --ramp 0 --jobs 2 --json \
	> /tmp/dmcrypt.json 2> /tmp/dmcrypt.err
echo "dmcrypt_rc=$?"
echo "dmcrypt_err=$(grep -v ' run ' /tmp/dmcrypt.err | head -2 | tr '\n' ' ')"
echo "dmcrypt_runs=$(jq -r '.operators[0] | "\(.name) \([.sizes[0].base_runs[], .sizes[0].with_runs[] | select(.iops > 0)] | length)"' /tmp/dmcrypt.json 2>/dev/null)"
echo "dmcrypt_left=$(dmsetup ls 2>/dev/null | grep -c iotrail-cost) loops=$(losetup -a | grep -c iotrail-cost)"
EOF
vm vm_modules --modules nvme-tcp,nvmet-tcp,null_blk:nr_devices=1:gb=1:bs=4096 \
	--modules f2fs,sch_netem,sch_tbf,loop,dm-crypt,xts,ecb -- bash "$TMP/modules.sh"
if [ -z "$(value null_blk_gb vm_modules)" ]; then
	why=$(vm_why vm_modules)
	for n in $names; do fail "$n" "the VM did not run the command: $why"; done
	exit 1
fi

nl=$(sed -n 's/^not_loaded=//p' "$TMP/vm_modules.out" | tr '\n' ' ')
if [ -z "$nl" ]; then
	pass "vm_modules_load (nvme-tcp nvmet-tcp null_blk f2fs sch_netem sch_tbf; ${VM_SECS} s)"
else
	fail vm_modules_load "not loaded: $nl"
fi

gb=$(value null_blk_gb vm_modules) bs=$(value null_blk_bs vm_modules)
if [ "$gb" = 1 ] && [ "$bs" = 4096 ]; then
	pass "vm_module_params (null_blk:nr_devices=1:gb=1:bs=4096)"
else
	fail vm_module_params "null_blk gb=$gb bs=$bs, want gb=1 bs=4096"
fi

err=$(value setup_error vm_modules)
sizes=$(value tcp_size vm_modules)
if [ -n "$err" ]; then
	fail vm_nvme_tcp_loopback "configfs setup: $err"
elif [ "$(value tcp_ns vm_modules)" != ok ]; then
	fail vm_nvme_tcp_loopback "no /dev/nvme0n1 after the connect"
elif [ "$(value tcp_transport vm_modules)" != tcp ]; then
	fail vm_nvme_tcp_loopback "nvme0 transport '$(value tcp_transport vm_modules)', want tcp"
elif [ "${sizes%% *}" != "${sizes##*=}" ]; then
	fail vm_nvme_tcp_loopback "namespace size differs from nullb0: $sizes"
elif [ "$(value tcp_read vm_modules)" != ok ]; then
	fail vm_nvme_tcp_loopback "reading the namespace failed"
else
	pass "vm_nvme_tcp_loopback (nvme0n1 over tcp 127.0.0.1:4420 = nullb0, $(value tcp_subsysnqn vm_modules))"
fi

if [ "$(value tp_nvmet_req_init vm_modules)" = ok ] && [ "$(value tp_nvmet_req_complete vm_modules)" = ok ]; then
	pass "vm_nvmet_tracepoints (nvmet:nvmet_req_init nvmet:nvmet_req_complete)"
else
	fail vm_nvmet_tracepoints "nvmet tracepoints missing in the guest"
fi

z=$(value zoned_nullb vm_modules)
case "$z" in
	"host-managed zones=16") pass "vm_null_blk_zoned (64 MiB / 4 MiB zones: $z)" ;;
	*) fail vm_null_blk_zoned "zoned null_blk: '$z', want 'host-managed zones=16'" ;;
esac

terr=$(value tc_error vm_modules)
if [ -n "$terr" ]; then
	fail vm_netem_tbf "tc: $terr"
elif [ "$(value netem_read vm_modules)" != ok ] || [ "$(value tbf_read vm_modules)" != ok ]; then
	fail vm_netem_tbf "NVMe/TCP reads over lo failed: netem '$(value netem_read vm_modules)', tbf '$(value tbf_read vm_modules)'"
elif [ "$(value qdisc vm_modules)" != "tbf " ]; then
	fail vm_netem_tbf "qdisc on lo: '$(value qdisc vm_modules)', want tbf"
else
	pass "vm_netem_tbf (NVMe/TCP reads through netem delay, then tbf rate on lo)"
fi

if [ "$(value f2fs vm_modules)" = ok ]; then
	pass vm_f2fs
else
	fail vm_f2fs "f2fs is not in the guest's /proc/filesystems"
fi
rc=$(value dmcrypt_rc vm_modules) runs=$(value dmcrypt_runs vm_modules) left=$(value dmcrypt_left vm_modules)
if { [ "$rc" = 0 ] || [ "$rc" = 3 ]; } && [ "$runs" = "dm-crypt 2" ] && [ "$left" = "0 loops=0" ]; then
	pass "vm_cost_dm_crypt (iotrail cost --op dm-crypt: a base and a with run read, exit $rc; no mapping or loop device left)"
else
	fail vm_cost_dm_crypt "exit $rc, runs '$runs', left '$left': $(value dmcrypt_err vm_modules)"
fi
exit $FAILED
