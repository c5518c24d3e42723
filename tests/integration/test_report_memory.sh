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
