#!/usr/bin/env bash
# Overload (issue 13): a deliberately tiny ring buffer (--ringbuf-mb 1, the
# smallest) under fio's random reads at QD 32, and the recorder stopped
# for a second mid-run (SIGSTOP: its consumer falls behind, as on a
# loaded machine), so the ring overflows and events are dropped. The
# counts must stay honest and exact about what they lack:
#   - the recorder reports drops (> 0, else the overload did not happen),
#   - iotrail's completed reads + the reads its report says it lacks
#     (reconciled with the kernel's count over the probes' window) ==
#     that count (the recorder's diskstats) == fio's total_ios,
#   - the text report says plainly that counts are lower bounds, and by
#     how many I/Os.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NAME=overload_counts_exact
NIOS=${NIOS:-100000}
why=$(host_blocker)
if [ -n "$why" ]; then
	skip "$NAME" "$why"
	exit 0
fi
make_loop 128 none || { fail "$NAME" "cannot set up a loop device"; exit 1; }

"$IOTRAIL" record -o "$TMP/o.trail" --ringbuf-mb 1 --layers block --dev "$LOOPNAME" -- \
	$(fio_cmd "$TMP/fio.json" "$NIOS" --iodepth=32 --io_size=2G) > "$TMP/rec.out" 2>&1 &
rec=$!
# once fio runs (the recorder's child), stop the consumer for a second
for i in $(seq 1 100); do pgrep -P $rec -x fio > /dev/null && break; sleep 0.05; done
sleep 0.3
kill -STOP $rec
sleep 1
kill -CONT $rec
wait $rec
rc=$?
[ $rc -eq 0 ] || { fail "$NAME" "record exit $rc: $(tail -1 "$TMP/rec.out")"; exit 1; }
"$IOTRAIL" report --json "$TMP/o.trail" > "$TMP/o.json" 2> "$TMP/o.err" \
	|| { fail "$NAME" "report failed: $(head -1 "$TMP/o.err")"; exit 1; }
"$IOTRAIL" report "$TMP/o.trail" > "$TMP/o.txt" 2>&1

fio_ios=$(jq -r '.jobs[0].read.total_ios' "$TMP/fio.json")
dropped=$(jq -r '.dropped' "$TMP/o.json")
reads=$(jq -r "[.groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\") | .count] | add // 0" "$TMP/o.json")
wreads=$(jq -r ".diskstats[\"$LOOPNAME\"].reads // -1" "$TMP/o.json")
lack=$(jq -r ".diskstats[\"$LOOPNAME\"].window.lacking.reads // -1" "$TMP/o.json")
total_lack=$(jq -r '.diskstats_window.lacking // -1' "$TMP/o.json")
said=$(grep -c "lower bounds by $total_lack I/Os" "$TMP/o.txt")

if [ "$fio_ios" != "$NIOS" ]; then
	fail "$NAME" "fio did $fio_ios reads of $NIOS"
elif [ "$dropped" -le 0 ]; then
	fail "$NAME" "no event was dropped with a 1 MiB ring and the consumer stopped 1 s: the overload did not happen"
elif [ "$wreads" != "$fio_ios" ] || [ "$lack" -lt 0 ] || [ $((reads + lack)) != "$fio_ios" ]; then
	fail "$NAME" "iotrail counted $reads reads and says it lacks $lack of the recorder's diskstats $wreads; fio did $fio_ios ($dropped events dropped)"
elif [ "$lack" -gt 0 ] && [ "$said" != 1 ]; then
	fail "$NAME" "the text report does not say 'lower bounds by $total_lack I/Os'"
else
	pass "$NAME ($dropped events dropped: reads $reads + lacking $lack == diskstats $wreads == fio $fio_ios; the report says: lower bounds by $total_lack I/Os)"
fi
exit 0
