#!/usr/bin/env bash
# The emulated NVMe SSD (run --nvme): the guest has /dev/nvme0n1 and the
# nvme tracepoints iotrail hooks; the host's fio, run in the guest, does
# exactly 1000 4K reads on it; and while it runs, an fentry and a kprobe on
# the driver's nvme_setup_cmd (a module function, so module BTF is used) and
# the nvme:nvme_complete_rq tracepoint, attached from a libbpf program,
# count every command.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NIOS=1000
names="vm_nvme_device vm_nvme_tracepoints vm_nvme_fio vm_bpf_module_btf
       vm_bpf_fentry vm_bpf_kprobe vm_bpf_tracepoint"
why=$(vm_blocker)
if [ -n "$why" ]; then
	skip_all "$why" $names
	exit 0
fi
if ! command -v fio >/dev/null; then
	skip vm_nvme_fio "fio is not installed (scripts/install-deps.sh)"
fi
bpf_why=$(build_attach_check)

out=$TMP/out
mkdir -p "$out"
cat > "$TMP/nvme.sh" <<EOF
echo "dev=\$(test -b /dev/nvme0n1 && echo ok)"
echo "size=\$(cat /sys/block/nvme0n1/size)"
for e in nvme_setup_cmd nvme_complete_rq nvme_sq; do
	test -d /sys/kernel/tracing/events/nvme/\$e && echo "tp_\$e=ok"
done
echo "module_btf=\$(test -r /sys/kernel/btf/nvme_core && echo ok)"
command -v fio >/dev/null || exit 0
fio=(fio --name=vm_nvme --filename=/dev/nvme0n1 --rw=randread --bs=4k --direct=1
     --ioengine=psync --number_ios=$NIOS --size=512M --randrepeat=1
     --output-format=json --output=$out/fio.json)
if [ -x "$TMP/attach_check" ]; then
	"$TMP/attach_check" "$TMP/attach_check.bpf.o" nvme_setup_cmd nvme:nvme_complete_rq -- "\${fio[@]}" |
		sed 's/^/hits /'
else
	"\${fio[@]}"
fi
EOF
vm vm_nvme --nvme --out "$out" -- bash "$TMP/nvme.sh"
if [ "$(value dev vm_nvme)" != ok ]; then
	why=$(vm_why vm_nvme)
	for n in $names; do fail "$n" "no /dev/nvme0n1 in the guest: $why"; done
	exit 1
fi
pass "vm_nvme_device (/dev/nvme0n1, $(( $(value size vm_nvme) / 2048 )) MiB; ${VM_SECS} s)"

missing=""
for e in nvme_setup_cmd nvme_complete_rq nvme_sq; do
	[ "$(value "tp_$e" vm_nvme)" = ok ] || missing="$missing nvme:$e"
done
if [ -n "$missing" ]; then
	fail vm_nvme_tracepoints "missing in the guest:$missing"
else
	pass "vm_nvme_tracepoints (nvme:nvme_setup_cmd nvme:nvme_complete_rq nvme:nvme_sq)"
fi

if command -v fio >/dev/null; then
	ios=$(sed -n 's/.*"total_ios" : \([0-9]*\).*/\1/p' "$out/fio.json" 2>/dev/null | head -n1)
	if [ "$ios" = "$NIOS" ]; then
		pass "vm_nvme_fio (fio total_ios $ios)"
	else
		fail vm_nvme_fio "fio total_ios '${ios}', want $NIOS ($(vm_why vm_nvme))"
	fi
fi

if [ "$(value module_btf vm_nvme)" = ok ]; then
	pass vm_bpf_module_btf
else
	fail vm_bpf_module_btf "no /sys/kernel/btf/nvme_core in the guest"
fi

if [ -n "$bpf_why" ]; then
	skip_all "$bpf_why" vm_bpf_fentry vm_bpf_kprobe vm_bpf_tracepoint
	exit $FAILED
fi
hits=$(sed -n 's/^hits //p' "$TMP/vm_nvme.out" | head -n1)
for kind in fentry kprobe tracepoint; do
	n=$(echo "$hits" | tr ' ' '\n' | sed -n "s/^$kind=//p")
	case "$n" in
		'') fail "vm_bpf_$kind" "attach_check printed nothing ($(vm_why vm_nvme))" ;;
		*[!0-9]*) fail "vm_bpf_$kind" "$n" ;;
		*) if [ "$n" -ge "$NIOS" ]; then
			pass "vm_bpf_$kind ($n hits for $NIOS reads)"
		   else
			fail "vm_bpf_$kind" "$n hits, want >= $NIOS"
		   fi ;;
	esac
done
exit $FAILED
