#!/usr/bin/env bash
# Every line of the text report fits 100 columns (README's promise), with
# the default grouping and with wide ones (--group-by comm,pid,op and all
# five keys; the fabric tables by all their keys), on every fixture in tests/data and on a recording of the
# demo's workload (scripts/demo.sh: fio randrw 70/30, 4K/64K, io_uring QD
# 16; one second here). --log is an event list whose last column is the
# file's path: not held to it.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

GROUPINGS="op,dev comm,pid,op op,comm,pid op,size,dev,comm,pid"

# widest TRACE: "COLUMNS LINE" of the widest line of every text report
widest() {
	local g
	{
		"$IOTRAIL" report "$1"
		"$IOTRAIL" report --zones "$1"
		for g in $GROUPINGS; do "$IOTRAIL" report --group-by "$g" "$1"; done
		"$IOTRAIL" report --fabric-group-by op,size,queue,initiator,machine "$1"
	} 2>&1 | awk 'length($0) > m { m = length($0); l = $0 } END { print m, l }'
}

[ -x "$IOTRAIL" ] || { skip report_width_fixtures "$IOTRAIL is not built"; exit 0; }
bad=""
for t in tests/data/*.trail; do
	w=$(widest "$t")
	[ "${w%% *}" -gt 100 ] && bad="$bad $(basename "$t"): ${w}|"
done
if [ -z "$bad" ]; then
	pass "report_width_fixtures (every line of every text report of tests/data/*.trail, grouped by $GROUPINGS, <= 100 columns)"
else
	fail report_width_fixtures "lines over 100 columns:$bad"
fi

why=$(host_blocker)
[ -n "$why" ] && { skip report_width_demo "$why"; exit 0; }
make_loop 256 mq-deadline || { fail report_width_demo "cannot set up a loop device"; exit 1; }
"$IOTRAIL" record -o "$TMP/demo.trail" --dev "$LOOPNAME" -- \
	fio --name=demo --filename="$LOOPDEV" --rw=randrw --rwmixread=70 --bssplit=4k/70:64k/30 \
	--direct=1 --ioengine=io_uring --iodepth=16 --time_based --runtime=1 --size=240M \
	--output="$TMP/fio.txt" > "$TMP/rec.out" 2>&1 \
	|| { fail report_width_demo "record failed: $(tail -1 "$TMP/rec.out")"; exit 1; }
w=$(widest "$TMP/demo.trail")
if [ "${w%% *}" -le 100 ] && [ "$(jq -r .ios < <("$IOTRAIL" report --json "$TMP/demo.trail"))" -gt 0 ]; then
	pass "report_width_demo (the demo's workload: widest line ${w%% *} columns)"
else
	fail report_width_demo "widest line: $w"
fi
exit ${FAILED:-0}
