#!/usr/bin/env bash
# The report's memory on a syscall-heavy trace (issue 13): it must not
# grow with the number of system calls. A synthetic trace (bench/analyzer
# -s 3 -l: 700,000 I/Os, each owned by a pread64/pwrite64 of its thread,
# between them a newfstatat by name and a cached pread: 2,100,000 calls;
# and at the start a kworker's write whose completion event is lost, its
# trail open to the end) is reported with /usr/bin/time. Asserted: the
# report counts the generator's 2,100,000 calls, 700,000 owned I/Os and
# the one left open, and its peak RSS stays under 40 MiB (~20 MiB now;
# 82 MiB when every call's name was kept to the end; 193 MiB when every
# thread's calls waited behind the open trail, the block watermark, as
# they did before they waited for their own thread's trails only).
# bench/report_memory.sh measures 100M calls.
# Then a trace naming many block devices (tests/tools/many_devices: each
# with a read at the start and one ten hours later, as a damaged or forged
# file may): 4,000 are reported within 256 MiB (the timelines share a
# budget: 3.6 GB before), 17,000 are refused with one line (more than the
# analyzer follows, IT_DEVS_MAX), not an out-of-memory death.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

GEN=${GEN:-$PWD/build/bench/analyzer}
if [ ! -x "$GEN" ] || [ ! -x "$IOTRAIL" ]; then
	skip report_memory "$GEN or $IOTRAIL is not built (run make)"
	exit 0
fi
if [ ! -x /usr/bin/time ]; then
	skip report_memory "/usr/bin/time is missing (scripts/install-deps.sh)"
	exit 0
fi
if ! "$GEN" -g -n 700000 -s 3 -l -o "$TMP/sys.trail" > /dev/null; then
	fail report_memory "bench/analyzer could not write the synthetic trace"
	exit 0
fi
if ! /usr/bin/time -f '%M' -o "$TMP/time" "$IOTRAIL" report --json "$TMP/sys.trail" > "$TMP/r.json"; then
	fail report_memory "report failed on the synthetic trace"
	exit 0
fi
peak_kb=$(tail -1 "$TMP/time")
calls=$(jq -r '.syscall_calls' "$TMP/r.json")
owned=$(jq -r '.syscall_block.owned_ios' "$TMP/r.json")
open=$(jq -r '.incomplete' "$TMP/r.json")
if [ "$calls" != 2100000 ] || [ "$owned" != 700000 ] || [ "$open" != 1 ]; then
	fail report_memory "the report counts $calls calls, $owned owned I/Os and $open left open, the trace has 2100000, 700000 and 1"
elif [ "$peak_kb" -gt $((40 * 1024)) ]; then
	fail report_memory "peak RSS $peak_kb KiB on 2.1M system calls, over 40 MiB: per-call memory is back, or the calls wait behind the I/O left open"
else
	pass "report_memory (2.1M system calls, an I/O open all along: peak RSS $((peak_kb / 1024)) MiB)"
fi

# The block I/O of files waits for the end in a spill file under $TMPDIR
# (src/layers/syscall/sysan.c), in memory only when none can be made: the
# two give the same report (a trace whose I/O is of two files)
want=$("$IOTRAIL" report --json tests/data/syscall-mixed.trail | jq -c '.syscall_block.files')
got=$(TMPDIR=/nonexistent "$IOTRAIL" report --json tests/data/syscall-mixed.trail | jq -c '.syscall_block.files')
n=$(echo "$want" | jq 'length')
if [ "${n:-0}" -gt 0 ] && [ "$got" = "$want" ]; then
	pass "report_file_trails_spill ($n files' block I/O the same, spilled to a file or kept in memory)"
else
	fail report_file_trails_spill "files spilled: $want; in memory: $got"
fi

MANY=$(dirname "$IOTRAIL")/tests/many_devices
if [ ! -x "$MANY" ]; then
	skip report_many_devices "$MANY is not built (run make)"
	skip report_too_many_devices "$MANY is not built (run make)"
	exit "${FAILED:-0}"
fi
if ! "$MANY" "$TMP/many.trail" 4000 || ! "$MANY" "$TMP/toomany.trail" 17000; then
	fail report_many_devices "tests/tools/many_devices could not write its traces"
	exit 1
fi
if ! /usr/bin/time -f '%M' -o "$TMP/time" "$IOTRAIL" report --json "$TMP/many.trail" > "$TMP/m.json"; then
	fail report_many_devices "report failed on 4,000 devices: $(tail -1 "$TMP/time")"
else
	peak_kb=$(tail -1 "$TMP/time")
	# every device's timeline holds its two reads
	devs=$(jq -r '[.timeline[] | select(([.points[].ios] | add) == 2)] | length' "$TMP/m.json")
	ios=$(jq -r '.ios' "$TMP/m.json")
	if [ "$devs" != 4000 ] || [ "$ios" != 8000 ]; then
		fail report_many_devices "the report has $devs device timelines with their 2 I/Os and $ios I/Os, the trace 4000 devices and 8000 I/Os"
	elif [ "$peak_kb" -gt $((256 * 1024)) ]; then
		fail report_many_devices "peak RSS $peak_kb KiB on 4,000 devices, over 256 MiB"
	else
		pass "report_many_devices (4,000 devices over 10 h: every I/O, peak RSS $((peak_kb / 1024)) MiB)"
	fi
fi
"$IOTRAIL" report "$TMP/toomany.trail" > /dev/null 2> "$TMP/err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l < "$TMP/err")" = 1 ] &&
   grep -q "more than 16384 block devices" "$TMP/err"; then
	pass "report_too_many_devices (17,000 devices: $(cat "$TMP/err"))"
else
	fail report_too_many_devices "exit $rc, stderr: $(head -3 "$TMP/err" | tr '\n' '|')"
fi
exit "${FAILED:-0}"
