# shellcheck shell=bash disable=SC2034
# Shared helpers for the VM tests (sourced, not run; cwd = the repository).
# Each test prints "PASS name", "FAIL name: why" or "SKIP name: why", and a
# "time name: N s" line per VM boot.

VM=${VM:-tests/vm/run}
# a hung guest fails its test after this long, not after run's 300 s
VM_TIMEOUT=${VM_TIMEOUT:-120}
TMP=$(mktemp -d /tmp/iotrail-vmt.XXXXXX)
FAILED=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; FAILED=1; }
skip() { echo "SKIP $1: $2"; }
skip_all() { # why name...
	local why=$1 n
	shift
	for n in "$@"; do skip "$n" "$why"; done
}

# VM_KEEP=1 keeps the guest's outputs for a look (the path goes to stderr)
if [ -n "${VM_KEEP:-}" ]; then
	trap 'echo "kept $TMP" >&2' EXIT
else
	trap 'rm -rf "$TMP"' EXIT
fi

# Prints why VMs cannot run here, or nothing when they can.
vm_blocker() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (the VM shares the host's whole root file system)"; return; }
	command -v qemu-system-x86_64 >/dev/null ||
		{ echo "qemu-system-x86_64 is not installed (scripts/install-deps.sh --vm)"; return; }
	command -v busybox >/dev/null ||
		{ echo "busybox is not installed (scripts/install-deps.sh --vm)"; return; }
	command -v cpio >/dev/null || { echo "cpio is not installed (scripts/install-deps.sh --vm)"; return; }
	local k
	k=$(scripts/vm-kernel.sh -q 2>&1) || { echo "no guest kernel: ${k##*$'\n'}"; return; }
}

# vm_skip_unless TOOL... -- NAME...: when VMs cannot run here, a TOOL is
# missing or build/iotrail is not built, prints SKIP for every NAME and
# exits the test (status 0); returns otherwise.
vm_skip_unless() {
	local why t
	why=$(vm_blocker)
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		if [ -z "$why" ] && ! command -v "$1" >/dev/null; then
			case $1 in
			tc) why="tc is not installed (iproute2; scripts/install-deps.sh)" ;;
			blkzone) why="blkzone (util-linux) is not installed" ;;
			*) why="$1 is not installed (scripts/install-deps.sh)" ;;
			esac
		fi
		shift
	done
	shift
	[ -z "$why" ] && [ ! -x build/iotrail ] && why="build/iotrail is not built (make)"
	if [ -n "$why" ]; then
		skip_all "$why" "$@"
		exit 0
	fi
}

# The guest kernel's release, e.g. 6.1.0-56-amd64.
vm_kernel_release() {
	basename "$(scripts/vm-kernel.sh -q | sed -n 2p)"
}

# vm NAME [run options] -- COMMAND [ARGS]: runs COMMAND in a VM; its stdout
# and stderr land in $TMP/NAME.out and $TMP/NAME.err, its status in VM_RC,
# the wall time in VM_SECS (also printed as "time NAME: N s").
vm() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s%N)
	"$VM" --timeout "$VM_TIMEOUT" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
	VM_RC=$?
	t1=$(date +%s%N)
	VM_SECS=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e9 }')
	echo "time $name: $VM_SECS s (status $VM_RC)"
}

# The first line of the VM's stderr that tests/vm/run wrote, for messages.
vm_why() {
	local l
	l=$(grep -m1 '^tests/vm/run: ' "$TMP/$1.err")
	[ -n "$l" ] || l=$(grep -v '^$' "$TMP/$1.err" | tail -n1)
	echo "${l:-status $VM_RC, no message}"
}

# value KEY NAME: the value of "KEY=value" in the VM's stdout
value() {
	sed -n "s/^$1=//p" "$TMP/$2.out" | head -n1
}

# Builds the BPF attach checker (tests/vm/bpf/) into $TMP; prints why not.
build_attach_check() {
	command -v clang >/dev/null || { echo "clang is not installed (scripts/install-deps.sh)"; return; }
	command -v gcc >/dev/null || { echo "gcc is not installed (scripts/install-deps.sh)"; return; }
	[ -f /usr/include/bpf/libbpf.h ] || { echo "libbpf-dev is not installed (scripts/install-deps.sh)"; return; }
	local arch_inc
	arch_inc=/usr/include/$(gcc -print-multiarch 2>/dev/null)
	clang -g -O2 -target bpf -Wall -Werror -I"$arch_inc" \
		-c tests/vm/bpf/attach_check.bpf.c -o "$TMP/attach_check.bpf.o" 2> "$TMP/cc.err" ||
		{ echo "cannot build attach_check.bpf.o: $(head -n1 "$TMP/cc.err")"; return; }
	gcc -O2 -Wall -Wextra -Werror tests/vm/bpf/attach_check.c -o "$TMP/attach_check" -lbpf 2> "$TMP/cc.err" ||
		{ echo "cannot build attach_check: $(head -n1 "$TMP/cc.err")"; return; }
}
