#!/usr/bin/env bash
# The reports and exports of the fixtures in tests/data are byte for byte
# the ones stored in tests/data/golden, which the build before the one-pass
# analysis (commit 6b0cbf9) wrote (nvme-tcp-loop's: the build that added
# the fabric view; the trace is 200 fio reads and writes over NVMe/TCP
# loopback in the test VM, tests/vm/nvme-tcp-loop, recorded with the block,
# nvme and nvmet layers; nvme-tcp-r2t's: the build that added the NVMe/TCP
# transport layers, 100 fio 128K sequential writes over the same loopback,
# with the nvme-tcp and nvmet-tcp layers, tests/vm/test_nvme_tcp_transport.sh;
# nvme-tcp-r2t-split's: the build that added the cross-machine join, the
# same trace as two machines by build/tests/split_trace --offset 3700000000
# --drift-ppm 50 (the target's events on machine 1, its clock 3.7 s ahead
# and gaining 50 ppm: tests/integration/test_clock_split.sh checks it
# against the truth);
# nvme-tcp-qd16's: the build that added the io_work scheduling delay, 400
# fio 4K random reads at QD16 from the CPU that is not the one I/O queue's,
# over the same loopback (the workload test_nvme_tcp_transport.sh's qd16);
# the truncation note of syscall-chunks-cut's: the build that made it say
# why the file is cut; syscall-titles': the build that added process
# titles, a shell running two dd with fdatasync and fsync under the
# default layers and --comm sh; fs-extents': the build that added record
# --extents, --layers fs alone on ext4 over a loop device, a file appended,
# one written and one removed, as in README; f2fs-gc's: the build that
# added F2FS's tracepoints, `record -v --layers fs --extents /tmp/f2fs --
# build/tests/f2fs_gc /tmp/f2fs 4` in the test VM on F2FS over a zoned
# null_blk after two of six 1 MiB files were removed, as test_zones.sh
# does: two GC rounds, f2 and f4 moved, two checkpoints; its outputs
# rewritten by the build that added background GC's written-back moves,
# which changed the GC rounds' heading and added two zero JSON counts): a
# change to the analysis
# side that is meant to keep the output proves it here.
#
#   tests/integration/test_golden.sh                  compare (PASS/FAIL lines)
#   tests/integration/test_golden.sh --record BINARY  rewrite the golden files
#                                                     with BINARY's output
#
# Each case stores stdout (NAME.out, or NAME.out.xz when over 64 KiB: the
# event lists) and the exit status with stderr (NAME.err: "exit N", then
# stderr). No field depends on the machine that
# reads the trace: the reports are functions of the file alone (the host,
# kernel and start time are the recording's, printed in UTC), except the
# trace path, which is printed as given: this script always gives it
# relative to the repository root (tests/data/NAME.trail). Nothing is
# filtered or loosened.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

GOLDEN=tests/data/golden
TRACES="syscall-mixed syscall-chunks syscall-chunks-cut syscall-only syscall-titles v1-events nvme-tcp-loop nvme-tcp-r2t nvme-tcp-r2t-split nvme-tcp-qd16 fs-extents f2fs-gc"
# name|arguments (the trace path goes last)
CASES="report|report
json|report --json
json-events|report --json --events
log|report --log
group-op-comm-pid|report --group-by op,comm,pid
zones|report --zones
fabric-groups|report --fabric-group-by op,size,queue,initiator,machine
fabric-groups-json|report --json --fabric-group-by size,queue
csv|export --format csv"

record=""
if [ "${1:-}" = "--record" ]; then
	record=${2:?usage: $0 --record BINARY}
	IOTRAIL=$record
	mkdir -p "$GOLDEN"
fi
[ -x "$IOTRAIL" ] || { skip golden "$IOTRAIL is not built"; exit 0; }
command -v xz > /dev/null || { skip golden "xz is not installed (the long outputs are stored as .xz)"; exit 0; }

for t in $TRACES; do
	trace=tests/data/$t.trail
	while IFS='|' read -r name args; do
		base=$GOLDEN/$t.$name
		# shellcheck disable=SC2086 # args are words
		"$IOTRAIL" $args "$trace" > "$TMP/out" 2> "$TMP/stderr"
		{ echo "exit $?"; cat "$TMP/stderr"; } > "$TMP/err"
		if [ -n "$record" ]; then
			rm -f "$base.out" "$base.out.xz"
			if [ "$(wc -c < "$TMP/out")" -gt 65536 ]; then
				xz -9 -c "$TMP/out" > "$base.out.xz"
			else
				cp "$TMP/out" "$base.out"
			fi
			cp "$TMP/err" "$base.err"
			continue
		fi
		want=$base.out
		if [ -f "$base.out.xz" ]; then
			want=$TMP/want
			xz -d -c "$base.out.xz" > "$want"
		fi
		if [ ! -f "$want" ] || [ ! -f "$base.err" ]; then
			fail "golden_${t}_$name" "no golden file $base.out/.err"
		elif ! cmp -s "$TMP/out" "$want"; then
			fail "golden_${t}_$name" "stdout differs from $base.out: $(diff "$want" "$TMP/out" | head -4 | tr '\n' '|')"
		elif ! cmp -s "$TMP/err" "$base.err"; then
			fail "golden_${t}_$name" "exit status or stderr differs from $base.err: $(diff "$base.err" "$TMP/err" | head -4 | tr '\n' '|')"
		else
			pass "golden_${t}_$name ($(wc -c < "$want") bytes, $(head -1 "$base.err"))"
		fi
	done <<< "$CASES"
done
exit ${FAILED:-0}
