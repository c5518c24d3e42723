# Helpers of the syscall-layer tests (sourced after lib.sh, not run).

PROGS=${PROGS:-$(dirname "$IOTRAIL")/tests}

# Prints why the syscall tests cannot run here, or nothing when they can.
sys_blocker() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (BPF)"; return; }
	[ -x "$IOTRAIL" ] || { echo "$IOTRAIL is not built (run make)"; return; }
	[ -x "$PROGS/syscall_seq" ] || { echo "$PROGS/syscall_seq is not built (run make)"; return; }
	command -v jq >/dev/null || { echo "jq is not installed (scripts/install-deps.sh)"; return; }
	[ -r /sys/kernel/btf/vmlinux ] || { echo "kernel has no BTF"; return; }
	"$IOTRAIL" probe 2>/dev/null | grep -q '^ *syscall.*yes' ||
		{ echo "iotrail probe says this kernel cannot trace system calls"; return; }
}
