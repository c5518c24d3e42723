#!/usr/bin/env bash
# Ground truth by injection: a loop device over a slowfs file, where every
# read sleeps DELAY_US in the FUSE daemon below the loop driver. fio reads
# it at queue depth 1, so each I/O's time is the delay plus small overheads
# and fio's user-space and wake-up time is a few percent of it (on a
# tmpfs-backed loop the block time is ~10 us and fio adds 10-30 us, so the
# two can't be compared there). Checks:
#   - iotrail's completed reads on the device == fio's total_ios;
#   - iotrail's Q2C p50 is within 15% of fio's clat p50;
#   - the delay lands in the right stage: Q2C p50 and D2C p50 >= the delay,
#     and D2C is >= 90% of Q2C (the delay is issued -> completed);
#   - with mq-deadline, the I2D stage is there and small beside D2C.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

DELAY_US=${DELAY_US:-500}
NIOS=${NIOS:-2000}
NAMES="block_delay_none block_delay_mq-deadline block_delay_insert_mq-deadline"

why=$(host_blocker)
[ -n "$why" ] || why=$(slow_loop_blocker)
if [ -n "$why" ]; then
	for n in $NAMES; do skip "$n" "$why"; done
	exit 0
fi

# ge A B: A >= B (decimals)
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# stage REPORT FIELD STAGE: a field of a stage of the loop device's reads
stage() {
	jq -r "[.groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\")
		| .stages[] | select(.name == \"$3\") | .$2] | first // empty" "$1"
}

check_run() { # name scheduler
	local name=$1 sched=$2
	local trace=$TMP/$name.trail fiojson=$TMP/$name.json rep=$TMP/$name.report.json
	local delay_ns=$((DELAY_US * 1000))

	make_slow_loop "$DELAY_US" 64 "$sched" 2> "$TMP/$name.setup" \
		|| { fail "$name" "cannot set up a slowfs loop device with $sched: $(tail -1 "$TMP/$name.setup")"
		     drop_slow_loop; return 1; }
	if ! "$IOTRAIL" record -o "$trace" --layers block --dev "$LOOPNAME" -- \
		fio --name=delay --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --number_ios="$NIOS" --size=60M \
		--output-format=json --output="$fiojson" > "$TMP/$name.out" 2>&1; then
		fail "$name" "record failed: $(tail -1 "$TMP/$name.out")"
		drop_slow_loop
		return 1
	fi
	drop_slow_loop

	local fio_ios fio_p50 reads p50 d2c d2c_share d
	fio_ios=$(jq -r '.jobs[0].read.total_ios' "$fiojson")
	fio_p50=$(jq -r '.jobs[0].read.clat_ns.percentile["50.000000"]' "$fiojson")
	"$IOTRAIL" report --json "$trace" > "$rep" 2> "$TMP/$name.err" \
		|| { fail "$name" "report failed: $(head -1 "$TMP/$name.err")"; return 1; }
	local sel=".groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\")"
	reads=$(jq -r "[$sel | .count] | add // 0" "$rep")
	p50=$(jq -r "[$sel | .latency_ns.p50] | first // 0" "$rep")
	d2c=$(stage "$rep" p50_ns D2C)
	d2c_share=$(stage "$rep" share D2C)

	[ "$fio_ios" = "$NIOS" ] || { fail "$name" "fio did $fio_ios reads, asked for $NIOS"; return 1; }
	if [ "$reads" != "$fio_ios" ]; then
		local why
		why="iotrail counted $reads reads, fio did $fio_ios ($(jq -r \
			'"dropped \(.dropped), lost \(.stitch.lost), incomplete \(.incomplete)"' "$rep"))"
		if [ -z "${RETRY:-}" ] && explained_loss "$rep" "$fio_ios" "$reads"; then
			RETRY="first run: $why" check_run "$name" "$sched"
			return
		fi
		# lost: a request seen again before its completion event
		fail "$name" "$why${RETRY:+; $RETRY}"
		return 1
	fi
	d=$(rel_diff "$p50" "$fio_p50")
	ge 0.15 "$d" \
		|| { fail "$name" "Q2C p50 $p50 ns vs fio clat p50 $fio_p50 ns: off by $d (> 0.15)"; return 1; }
	ge "$p50" "$delay_ns" \
		|| { fail "$name" "Q2C p50 $p50 ns is below the injected delay $delay_ns ns"; return 1; }
	[ -n "$d2c" ] || { fail "$name" "no D2C stage for $LOOPNAME reads"; return 1; }
	ge "$d2c" "$delay_ns" \
		|| { fail "$name" "D2C p50 $d2c ns is below the injected delay $delay_ns ns"; return 1; }
	ge "$d2c_share" 0.9 \
		|| { fail "$name" "D2C is $d2c_share of Q2C, want >= 0.9: the delay is below the driver"
		     return 1; }
	pass "$name (delay $delay_ns ns; reads $reads == fio; Q2C p50 $p50 vs fio clat p50 $fio_p50 ns,\
 off by $d; D2C p50 $d2c ns, share $d2c_share; lost completions counted from their reused\
 request: $(jq -r '.stitch.lost_counted' "$rep")${RETRY:+; second run after a $RETRY})"
}

check_run block_delay_none none
if check_run block_delay_mq-deadline mq-deadline; then
	# every request is inserted into the scheduler, and at queue depth 1
	# it waits there next to nothing compared with the device time
	rep=$TMP/block_delay_mq-deadline.report.json
	i2d=$(stage "$rep" p50_ns I2D) i2d_share=$(stage "$rep" share I2D)
	d2c=$(stage "$rep" p50_ns D2C)
	if [ -z "$i2d" ]; then
		fail block_delay_insert_mq-deadline "no I2D stage in the report with mq-deadline"
	elif ! ge 0.05 "$i2d_share" || ! ge "$d2c" "$((i2d * 20))"; then
		fail block_delay_insert_mq-deadline \
			"I2D p50 $i2d ns (share $i2d_share) is not small beside D2C p50 $d2c ns"
	else
		pass "block_delay_insert_mq-deadline (I2D p50 $i2d ns, share $i2d_share; D2C p50 $d2c ns)"
	fi
else
	skip block_delay_insert_mq-deadline "the mq-deadline run failed"
fi
exit ${FAILED:-0}
