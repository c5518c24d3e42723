#!/usr/bin/env bash
# make demo: trace a short fio job on a loop device over a tmpfs file, print
# the report, clean up. Needs root (BPF, loop devices).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (BPF programs and a loop device); run: sudo make demo" >&2; exit 1; }

img=$(mktemp /dev/shm/iotrail-demo.XXXXXX)
out=$(mktemp -d /tmp/iotrail-demo.XXXXXX)
dev=""
cleanup() { [ -n "$dev" ] && losetup -d "$dev"; rm -f "$img"; rm -rf "$out"; }
trap cleanup EXIT

truncate -s 256M "$img"
dev=$(losetup -f --show --direct-io=on "$img")
echo mq-deadline > "/sys/block/${dev#/dev/}/queue/scheduler"
echo "demo: tracing fio on $dev (loop over tmpfs, mq-deadline): 70% random 4K reads," \
     "30% 64K writes, io_uring QD 16, 4 s"
echo
# every layer records every process by default: --comm fio keeps the
# syscall sections to fio's calls (the block I/O on the loop device is all
# fio's anyway)
build/iotrail record -o "$out/demo.trail" --dev "$dev" --comm fio -- \
	fio --name=demo --filename="$dev" --rw=randrw --rwmixread=70 --bssplit=4k/70:64k/30 \
	--direct=1 --ioengine=io_uring --iodepth=16 --time_based --runtime=4 --size=200M \
	--output="$out/fio.txt"
echo
build/iotrail report "$out/demo.trail"
# DEMO_KEEP=FILE keeps the trace for a look with other report options
[ -z "${DEMO_KEEP:-}" ] || cp "$out/demo.trail" "$DEMO_KEEP"
