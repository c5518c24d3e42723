#!/usr/bin/env bash
# The test VM itself (tests/vm/run): the stock kernel boots; the guest sees
# the repository at the host's path and runs in the host's cwd; an --out
# directory carries files both ways; writes elsewhere stay in the guest;
# COMMAND's exit status and stderr come back; the pseudo file systems, lo,
# BTF and BPF tracing support are there. Then the failure paths: a bad
# kernel and a hung guest end with one clear line and a non-zero status in
# bounded time, and a killed run leaves no QEMU behind.
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

names="vm_boot vm_same_paths vm_out_share vm_overlay vm_exit_status vm_mounts
       vm_loopback vm_bpf_support vm_bad_kernel vm_hung_guest vm_signal_cleanup"
why=$(vm_blocker)
if [ -n "$why" ]; then
	skip_all "$why" $names
	exit 0
fi

# ---- one boot for the checks of a working VM --------------------------------------
out=$TMP/out
mkdir -p "$out"
token="token-$$-$RANDOM"
echo "$token" > "$out/from-host"
cat > "$TMP/boot.sh" <<'EOF'
echo "kernel=$(uname -r)"
echo "cwd=$(pwd)"
echo "run_sum=$(sha256sum tests/vm/run | cut -d' ' -f1)"
echo "from_host=$(cat "$OUT/from-host")"
echo "$TOKEN" > "$OUT/from-guest"
touch /usr/.iotrail-vm-overlay-test && echo overlay_write=ok
for fs in proc sysfs devtmpfs tracefs debugfs bpf configfs; do
	awk -v fs="$fs" '$3 == fs { found = 1 } END { exit !found }' /proc/mounts || echo "missing_mount=$fs"
done
echo "tracing_dir=$(test -d /sys/kernel/tracing/events/block && echo ok)"
echo "bpffs_dir=$(stat -f -c %T /sys/fs/bpf)"
echo "lo=$(ip -o link show lo | grep -o '<[^>]*>')"
echo "btf=$(test -r /sys/kernel/btf/vmlinux && echo ok)"
bpftool feature probe kernel 2>/dev/null > /tmp/probe
grep -q 'program_type tracing is available' /tmp/probe && echo "bpf_tracing=ok"
grep -q 'program_type kprobe is available' /tmp/probe && echo "bpf_kprobe=ok"
echo "to-stderr-$TOKEN" >&2
exit 3
EOF
vm vm_boot --out "$out" -e OUT="$out" -e TOKEN="$token" -- bash "$TMP/boot.sh"
want_kernel=$(vm_kernel_release)
if [ "$VM_RC" -ne 3 ] && [ -z "$(value kernel vm_boot)" ]; then
	why=$(vm_why vm_boot)
	for n in vm_boot vm_same_paths vm_out_share vm_overlay vm_exit_status vm_mounts \
		vm_loopback vm_bpf_support; do
		fail "$n" "the VM did not run the command: $why"
	done
else
	k=$(value kernel vm_boot)
	if [ "$k" = "$want_kernel" ]; then
		pass "vm_boot (guest kernel $k, host $(uname -r); ${VM_SECS} s)"
	else
		fail vm_boot "guest runs kernel '$k', want $want_kernel"
	fi

	sum=$(sha256sum tests/vm/run | cut -d' ' -f1)
	if [ "$(value cwd vm_boot)" != "$PWD" ]; then
		fail vm_same_paths "guest cwd is '$(value cwd vm_boot)', host cwd $PWD"
	elif [ "$(value run_sum vm_boot)" != "$sum" ]; then
		fail vm_same_paths "the guest's $PWD/tests/vm/run differs from the host's"
	else
		pass "vm_same_paths (cwd and repository $PWD)"
	fi

	if [ "$(value from_host vm_boot)" != "$token" ]; then
		fail vm_out_share "guest read '$(value from_host vm_boot)' from --out, host wrote $token"
	elif [ "$(cat "$out/from-guest" 2>/dev/null)" != "$token" ]; then
		fail vm_out_share "host did not get the file the guest wrote into --out $out"
	else
		pass "vm_out_share (host -> guest -> host through $out)"
	fi

	if [ "$(value overlay_write vm_boot)" != ok ]; then
		fail vm_overlay "the guest could not write /usr (tmpfs overlay)"
	elif [ -e /usr/.iotrail-vm-overlay-test ]; then
		rm -f /usr/.iotrail-vm-overlay-test
		fail vm_overlay "a guest write to /usr reached the host's root"
	else
		pass vm_overlay
	fi

	if [ "$VM_RC" -ne 3 ]; then
		fail vm_exit_status "run -- ... exit 3 returned $VM_RC"
	elif ! grep -q "^to-stderr-$token\$" "$TMP/vm_boot.err"; then
		fail vm_exit_status "the guest's stderr did not reach run's stderr"
	elif ! grep -q "^from_host=$token\$" "$TMP/vm_boot.out"; then
		fail vm_exit_status "the guest's stdout did not reach run's stdout"
	else
		pass "vm_exit_status (exit 3 -> 3; stdout and stderr apart)"
	fi

	missing=$(value missing_mount vm_boot)
	if [ -n "$missing" ]; then
		fail vm_mounts "no $missing mount in the guest"
	elif [ "$(value tracing_dir vm_boot)" != ok ] || [ "$(value bpffs_dir vm_boot)" != bpf_fs ]; then
		fail vm_mounts "tracefs events or bpffs unusable (bpffs: $(value bpffs_dir vm_boot))"
	else
		pass "vm_mounts (proc sysfs devtmpfs tracefs debugfs bpf configfs)"
	fi

	case "$(value lo vm_boot)" in
		*UP*) pass vm_loopback ;;
		*) fail vm_loopback "lo is not up: $(value lo vm_boot)" ;;
	esac

	if [ "$(value btf vm_boot)" != ok ]; then
		fail vm_bpf_support "no /sys/kernel/btf/vmlinux in the guest"
	elif [ "$(value bpf_tracing vm_boot)" != ok ] || [ "$(value bpf_kprobe vm_boot)" != ok ]; then
		fail vm_bpf_support "bpftool feature probe: tracing '$(value bpf_tracing vm_boot)', kprobe '$(value bpf_kprobe vm_boot)'"
	else
		pass "vm_bpf_support (BTF; tracing and kprobe program types)"
	fi
fi

# ---- failure paths -------------------------------------------------------------
# A file that is no kernel: QEMU refuses it; one line, status 125, at once.
echo "not a kernel" > "$TMP/bad-kernel"
IOTRAIL_VM_KERNEL_IMAGE=$TMP/bad-kernel vm vm_bad_kernel -- true
lines=$(grep -c . "$TMP/vm_bad_kernel.err")
if [ "$VM_RC" -ne 125 ]; then
	fail vm_bad_kernel "status $VM_RC, want 125"
elif [ "$lines" -ne 1 ]; then
	fail vm_bad_kernel "$lines lines on stderr, want 1"
else
	pass "vm_bad_kernel ($(vm_why vm_bad_kernel))"
fi

# A guest that never finishes: killed at --timeout, status 124 (125 if the
# machine was too loaded to even boot in that time), nothing left behind.
mkdir -p "$TMP/hang"
TMPDIR=$TMP/hang vm vm_hung_guest --timeout 6 -- sleep 600
left=$(pgrep -f "$TMP/hang" | tr '\n' ' ')
if [ "$VM_RC" -ne 124 ] && [ "$VM_RC" -ne 125 ]; then
	fail vm_hung_guest "status $VM_RC, want 124"
elif ! awk -v s="$VM_SECS" 'BEGIN { exit !(s < 25) }'; then
	fail vm_hung_guest "took $VM_SECS s with --timeout 6"
elif [ -n "$left" ]; then
	fail vm_hung_guest "processes left running: $left"
elif [ -n "$(ls -A "$TMP/hang")" ]; then
	fail vm_hung_guest "temporary files left in $TMP/hang"
else
	pass "vm_hung_guest (status $VM_RC after $VM_SECS s: $(vm_why vm_hung_guest))"
fi

# run killed by SIGTERM mid-boot: QEMU and the helpers go with it.
mkdir -p "$TMP/sig"
TMPDIR=$TMP/sig "$VM" -- sleep 600 > /dev/null 2>&1 &
runpid=$!
sleep 3
kill -TERM "$runpid"
wait "$runpid"
rc=$?
sleep 0.5
left=$(pgrep -f "$TMP/sig" | tr '\n' ' ')
if [ -n "$left" ]; then
	fail vm_signal_cleanup "processes left running after SIGTERM: $left"
	# shellcheck disable=SC2086
	kill -KILL $left
elif [ -n "$(ls -A "$TMP/sig")" ]; then
	fail vm_signal_cleanup "temporary files left in $TMP/sig"
else
	pass "vm_signal_cleanup (status $rc)"
fi

exit $FAILED
