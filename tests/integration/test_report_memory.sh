#!/usr/bin/env bash
# The report's memory on a syscall-heavy trace (issue 13): it must not
# grow with the number of system calls. A synthetic trace (bench/analyzer
# -s 3: 700,000 I/Os, each owned by a pread64/pwrite64 of its thread,
# between them a newfstatat by name and a cached pread: 2,100,000 calls)
# is reported with /usr/bin/time. Asserted: the report counts the
# generator's 2,100,000 calls and 700,000 owned I/Os, and its peak RSS
# stays under 40 MiB (~17 MiB now; 82 MiB when every call's name was kept
# to the end, as before). bench/report_memory.sh measures 100M calls.
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
if ! "$GEN" -g -n 700000 -s 3 -o "$TMP/sys.trail" > /dev/null; then
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
if [ "$calls" != 2100000 ] || [ "$owned" != 700000 ]; then
	fail report_memory "the report counts $calls calls and $owned owned I/Os, the trace has 2100000 and 700000"
elif [ "$peak_kb" -gt $((40 * 1024)) ]; then
	fail report_memory "peak RSS $peak_kb KiB on 2.1M system calls, over 40 MiB: per-call memory is back"
else
	pass "report_memory (2.1M system calls: peak RSS $((peak_kb / 1024)) MiB)"
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
