#!/usr/bin/env bash
# -p PID keeps one process's I/O: two fio processes read the same loop
# device at once; a recording with -p of one of them counts exactly that
# one's reads (fio's own total_ios), none of the other's.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

why=$(host_blocker)
[ -n "$why" ] && { skip record_pid "$why"; exit 0; }
make_loop 128 none || { fail record_pid "cannot set up a loop device"; exit 1; }

# a fixed-count reader that starts after the recorder; --thread: the job
# runs in fio's own process, so its I/O carries fio's pid
job() { # name nios
	exec fio --thread --name="$1" --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --number_ios="$2" --size=120M --startdelay=4 \
		--output-format=json --output="$TMP/$1.json"
}
job mine 3000 > /dev/null 2>&1 & mine=$!
job other 2000 > /dev/null 2>&1 & other=$!
"$IOTRAIL" record -o "$TMP/pid.trail" --layers block --dev "$LOOPNAME" -p "$mine" -d 30 \
	> "$TMP/rec.out" 2>&1 &
rec=$!
# the trace file is created once the probes are attached
for i in $(seq 1 30); do [ -s "$TMP/pid.trail" ] && break; sleep 0.1; done
[ -s "$TMP/pid.trail" ] || { fail record_pid "the recorder was not ready within 3 s"; kill $rec; exit 1; }
wait $mine $other
kill -INT $rec; wait $rec
fio_mine=$(jq -r '.jobs[0].read.total_ios' "$TMP/mine.json")
got=$("$IOTRAIL" report --json --group-by op,pid "$TMP/pid.trail" \
	| jq -r "[.groups[] | select(.key.op == \"read\") | .count] | add // 0")
pids=$("$IOTRAIL" report --json --group-by pid "$TMP/pid.trail" | jq -r '[.groups[].key.pid] | unique | join(",")')
if [ "$got" = "$fio_mine" ] && [ "$pids" = "$mine" ]; then
	pass "record_pid ($got reads of pid $mine == its fio total_ios; the other process's 2000 left out)"
else
	fail record_pid "-p $mine: $got reads from pids '$pids', want $fio_mine from $mine only ($(tail -1 "$TMP/rec.out"))"
fi
exit ${FAILED:-0}
