# Shared helpers for the host integration tests (sourced, not run).
# Each test prints "PASS name", "FAIL name: why" or "SKIP name: why".

IOTRAIL=${IOTRAIL:-$PWD/build/iotrail}
TMP=$(mktemp -d /tmp/iotrail-it.XXXXXX)
LOOPDEV=""
LOOPIMG=""

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; FAILED=1; }
skip() { echo "SKIP $1: $2"; }

cleanup() {
	[ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
	[ -n "$LOOPIMG" ] && rm -f "$LOOPIMG"
	rm -rf "$TMP"
}
trap cleanup EXIT

# Prints why the host tests cannot run here, or nothing when they can.
host_blocker() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (BPF and loop devices)"; return; }
	[ -x "$IOTRAIL" ] || { echo "$IOTRAIL is not built (run make)"; return; }
	command -v fio >/dev/null || { echo "fio is not installed (scripts/install-deps.sh)"; return; }
	command -v jq >/dev/null || { echo "jq is not installed (scripts/install-deps.sh)"; return; }
	[ -r /sys/kernel/btf/vmlinux ] || { echo "kernel has no BTF"; return; }
	[ -e /dev/loop-control ] || modprobe loop 2>/dev/null
	[ -e /dev/loop-control ] || { echo "no loop device support (/dev/loop-control missing)"; return; }
}

# make_loop SIZE_MB [SCHEDULER]: a loop device over a tmpfs file (blk-mq,
# direct I/O to the backing file) in $LOOPDEV, $LOOPNAME.
make_loop() {
	LOOPIMG=$(mktemp /dev/shm/iotrail-it.XXXXXX)
	truncate -s "${1}M" "$LOOPIMG"
	LOOPDEV=$(losetup -f --show --direct-io=on "$LOOPIMG") || return 1
	LOOPNAME=${LOOPDEV#/dev/}
	echo "${2:-none}" > "/sys/block/$LOOPNAME/queue/scheduler" || return 1
	# let udev's probe reads (if any) finish before anything is traced
	command -v udevadm >/dev/null && udevadm settle 2>/dev/null
	return 0
}

# fio_cmd OUTJSON NIOS [extra fio args]: fixed-count 4K random reads.
# fio reaps completions by polling its completion ring
# (iodepth_batch_complete_min=0) at queue depth 32, so its clat is the time
# the I/O spent below the system call, not the time fio's thread took to be
# woken: at QD 8 with blocking reaps, fio's clat p50 was 2-3x the kernel's
# own (sysfs) average service time here, while iotrail's Q2C matched it.
fio_cmd() {
	local out=$1 nios=$2; shift 2
	echo fio --name=it --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 \
		--ioengine=io_uring --iodepth=32 --iodepth_batch_complete_min=0 \
		--number_ios="$nios" --size=120M \
		--output-format=json --output="$out" "$@"
}

# jq on the report of a trace: jq_report TRACE FILTER
jq_report() {
	"$IOTRAIL" report --json "$1" | jq -r "$2"
}

# rel_diff A B: |A-B|/B as a decimal
rel_diff() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.4f", (b == 0) ? 1 : d / b }'
}
