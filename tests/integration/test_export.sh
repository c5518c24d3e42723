#!/usr/bin/env bash
# `iotrail export` on the fixtures in tests/data (no recording, no root):
#   - perfetto (nvme-tcp-qd16, nvme-tcp-r2t: block + NVMe + fabric; syscall-mixed: calls + block): the JSON trace decoded on its own (tests/tools/check_perfetto.py,
#     python's json) against the report of the same trace: I/O count, per
#     stage counts and sums, NVMe commands, flows (call -> I/O == the calls'
#     owned I/Os, I/O -> NVMe command == the linked ones), counters; on
#     nvme-tcp-qd16 (initiator and target on one machine) the fabric view
#     too: fabric and target command slices == the report's fabric.matched,
#     per fabric stage slice counts and sums == its by_opcode stages'
#     sum_ns, flows NVMe command -> fabric command -> target command;
#     the same on it split into two machines (build/tests/split_trace), with
#     the clock estimated and with a stored estimate 300 us off (I/Os not
#     causal on the merged timeline: slices must still nest); nvme-tcp-r2t:
#     writes whose data came after an R2T (r2t.*, h2c.* stages);
#   - perfetto, every machine of a file of several (the split files and
#     nvme-tcp-r2t-split): machine 1's block slices, stages (counts and
#     sums), NVMe commands, flows and counters on its own processes
#     ("block nullb_it1 (m1 HOST)") == report --machine 1 --json's, and
#     machine 0's == report --json's (check_perfetto.py, a report each);
#   - csv --what trails|calls|nvme: one header line, then as many rows as
#     the report counts (ios, syscall_calls, nvme.commands) and as many
#     fields in each row as in the header (the zones kind: tests/unit,
#     test_export_zones, as no fixture has a zoned device);
#   - bad input: an unknown --what, a missing file: one line, exit 2 / 1.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

[ -x "$IOTRAIL" ] || { skip export "$IOTRAIL is not built (run make)"; exit 0; }
command -v python3 >/dev/null || { skip export "python3 is missing"; exit 0; }

# csv_rows FILE: its data rows, when each has the header's field count
# (split at every comma: no field of the fixtures holds one)
csv_rows() {
	awk -F, 'NR == 1 { n = NF; next } NF != n { print "bad row " NR; bad = 1; exit }
		 END { if (!bad) print NR - 1 }' "$1"
}

for t in nvme-tcp-qd16 nvme-tcp-r2t syscall-mixed; do
	trace=tests/data/$t.trail
	"$IOTRAIL" report --json "$trace" > "$TMP/$t.report.json" \
		|| { fail "export_$t" "report --json failed"; continue; }
	if "$IOTRAIL" export --format perfetto -o "$TMP/$t.json" "$trace" 2> "$TMP/$t.err" &&
	   python3 tests/tools/check_perfetto.py "$TMP/$t.json" "$TMP/$t.report.json" > "$TMP/$t.check"; then
		pass "export_perfetto_$t ($(tr '\n' ';' < "$TMP/$t.check"))"
	else
		fail "export_perfetto_$t" "$(cat "$TMP/$t.err" "$TMP/$t.check" 2>/dev/null | tail -2)"
	fi
	for what in trails calls nvme fabric; do
		case $what in
		trails) want=$(jq .ios "$TMP/$t.report.json") ;;
		calls) want=$(jq '.syscall_calls // 0' "$TMP/$t.report.json") ;;
		nvme) want=$(jq '.nvme.commands // 0' "$TMP/$t.report.json") ;;
		fabric) want=$(jq '.fabric.matched // 0' "$TMP/$t.report.json") ;;
		esac
		"$IOTRAIL" export --format csv --what $what -o "$TMP/$t.$what.csv" "$trace" 2> "$TMP/err" \
			|| { fail "export_csv_${what}_$t" "exit $?: $(cat "$TMP/err")"; continue; }
		got=$(csv_rows "$TMP/$t.$what.csv")
		if [ "$got" = "$want" ]; then
			pass "export_csv_${what}_$t ($got rows == the report's)"
		else
			fail "export_csv_${what}_$t" "$got rows, the report counts $want"
		fi
	done
done

# the fabric view, one machine (the loopback fixture) and two
# (split_trace: the target's events on machine 1, its clock 3.7 s ahead):
# checked above for qd16; each must have its fabric checks done (matched
# commands), the split one with the target's track on machine 1
SPLIT=$PWD/build/tests/split_trace
# split: the clock estimated from the I/Os, the recording 11 times over;
# badclock: a stored estimate
# 300 us off, so that I/Os are not causal on the merged timeline (the
# initiator's and target's stages must still nest, each on its thread)
for t in split badclock; do
	case $t in
	split) args="--repeat 11" ;; # 4500 NVMe commands: more than the export keeps unpruned
	badclock) args="--store-clock --stored-error 300000" ;;
	esac
	if [ ! -x "$SPLIT" ]; then
		skip export_perfetto_two_machines_$t "$SPLIT is not built (run make)"
	elif "$SPLIT" tests/data/nvme-tcp-qd16.trail "$TMP/$t.trail" --offset 3700000000 $args > /dev/null &&
	     "$IOTRAIL" report --json "$TMP/$t.trail" > "$TMP/$t.report.json" &&
	     "$IOTRAIL" report --json --machine 1 "$TMP/$t.trail" > "$TMP/$t.report1.json" &&
	     "$IOTRAIL" export --format perfetto -o "$TMP/$t.json" "$TMP/$t.trail" 2> "$TMP/$t.err" &&
	     python3 tests/tools/check_perfetto.py "$TMP/$t.json" "$TMP/$t.report.json" \
		"$TMP/$t.report1.json" > "$TMP/$t.check" &&
	     grep -q '"name":"nvmet m1 cntlid 1 q1"' "$TMP/$t.json"; then
		pass "export_perfetto_two_machines_$t ($(grep fabric "$TMP/$t.check" | cut -c1-90)...)"
	else
		fail export_perfetto_two_machines_$t "$(cat "$TMP/$t.err" "$TMP/$t.check" 2>/dev/null | tail -2)"
	fi
done
# every machine's block I/O: the R2T fixture split into two machines
# (its target's disk, nullb_it1, on machine 1: 200 I/Os of its own)
t=nvme-tcp-r2t-split
if "$IOTRAIL" report --json tests/data/$t.trail > "$TMP/$t.report.json" &&
   "$IOTRAIL" report --json --machine 1 tests/data/$t.trail > "$TMP/$t.report1.json" &&
   "$IOTRAIL" export --format perfetto -o "$TMP/$t.json" tests/data/$t.trail 2> "$TMP/$t.err" &&
   python3 tests/tools/check_perfetto.py "$TMP/$t.json" "$TMP/$t.report.json" \
	"$TMP/$t.report1.json" > "$TMP/$t.check" &&
   grep -q '^machine 1: ok: [1-9][0-9]* block slices == report ios' "$TMP/$t.check"; then
	pass "export_perfetto_machines_$t ($(grep '^machine 1: ok: .*block\|^machine 1: ok: .*stages' "$TMP/$t.check" | tr '\n' ';' | cut -c1-150))"
else
	fail "export_perfetto_machines_$t" "$(cat "$TMP/$t.err" "$TMP/$t.check" 2>/dev/null | tail -2)"
fi
# without machine 1's report the check must fail (it cannot pass by
# ignoring a machine's tracks)
if python3 tests/tools/check_perfetto.py "$TMP/$t.json" "$TMP/$t.report.json" > "$TMP/$t.check0"; then
	fail export_perfetto_machines_need_reports "checked without machine 1's report"
else
	pass "export_perfetto_machines_need_reports ($(cut -c1-80 "$TMP/$t.check0"))"
fi
for t in nvme-tcp-qd16 nvme-tcp-r2t split badclock nvme-tcp-r2t-split; do
	if grep -q "^ok: [1-9][0-9]* fabric and target command slices" "$TMP/$t.check" 2>/dev/null; then
		pass "export_perfetto_fabric_$t"
	else
		fail "export_perfetto_fabric_$t" "no fabric commands checked in $TMP/$t.check"
	fi
done

# the nvme kind is the default: the same bytes with and without --what
t=tests/data/nvme-tcp-qd16.trail
if cmp -s <("$IOTRAIL" export --format csv "$t" 2>/dev/null) \
	  <("$IOTRAIL" export --format csv --what nvme "$t" 2>/dev/null); then
	pass export_csv_default_nvme
else
	fail export_csv_default_nvme "--format csv differs from --what nvme"
fi

"$IOTRAIL" export --format csv --what bogus "$t" > "$TMP/out" 2> "$TMP/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && [ ! -s "$TMP/out" ] &&
   grep -q "no kind .bogus.; use --what nvme|trails|calls|zones" "$TMP/err"; then
	pass export_bad_what
else
	fail export_bad_what "exit $rc, stderr: $(cat "$TMP/err")"
fi
"$IOTRAIL" export --format perfetto -o "$TMP/never.json" "$TMP/missing.trail" > "$TMP/out" 2> "$TMP/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && [ ! -e "$TMP/never.json" ]; then
	pass export_missing_file
else
	fail export_missing_file "exit $rc, output file made: $([ -e "$TMP/never.json" ] && echo yes || echo no), stderr: $(cat "$TMP/err")"
fi

# every machine into the CSV: qd16 split into two machines (the target's
# events on machine 1): trails' rows per machine column == report
# --machine N's ios, fabric rows == the matched commands, all served by
# machine 1
if [ -x "$SPLIT" ] && "$SPLIT" tests/data/nvme-tcp-qd16.trail "$TMP/two.trail" --offset 3700000000 > /dev/null; then
	want="0:$("$IOTRAIL" report --json "$TMP/two.trail" | jq .ios) 1:$("$IOTRAIL" report --json --machine 1 "$TMP/two.trail" | jq .ios)"
	got=$("$IOTRAIL" export --format csv --what trails "$TMP/two.trail" |
		awk -F, 'NR == 1 { if ($NF != "machine") exit } NR > 1 { n[$NF]++ }
			 END { printf "0:%d 1:%d", n[0], n[1] }')
	matched=$("$IOTRAIL" report --json "$TMP/two.trail" | jq .fabric.matched)
	fab=$("$IOTRAIL" export --format csv --what fabric "$TMP/two.trail" | awk -F, 'NR > 1 && $2 == 1' | wc -l)
	if [ "$got" = "$want" ] && [ "$fab" = "$matched" ] && [ "$matched" -gt 0 ]; then
		pass "export_csv_two_machines (trails by machine $got == the reports' ios; $fab fabric rows served by machine 1 == matched)"
	else
		fail export_csv_two_machines "trails by machine '$got', reports '$want'; fabric rows of machine 1: $fab, matched $matched"
	fi
else
	skip export_csv_two_machines "$SPLIT is not built or failed (run make)"
fi
exit ${FAILED:-0}
