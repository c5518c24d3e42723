#!/usr/bin/env bash
# Ground truth from fio: a fixed number of 4K random reads on a loop device
# over a tmpfs file. iotrail's completed reads on that device must equal
# fio's total_ios exactly, and its Q2C p50 must be within 15% of fio's clat
# p50. Run with no scheduler (direct issue: no insert events) and with
# mq-deadline (insert events present, I2D stage), and with the raw_tp
# fallback hooks (the path kernels without tp_btf take).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NIOS=20000
why=$(host_blocker)
if [ -n "$why" ]; then
	for s in none mq-deadline raw_tp; do skip "block_fio_$s" "$why"; done
	exit 0
fi

check_run() { # name scheduler [record options]
	local name=$1 sched=$2; shift 2
	local trace=$TMP/$name.trail fiojson=$TMP/$name.json

	make_loop 128 "$sched" || { fail "$name" "cannot set up a loop device with $sched"; return; }
	if ! "$IOTRAIL" record -o "$trace" --dev "$LOOPNAME" "$@" -- $(fio_cmd "$fiojson" $NIOS) \
		> "$TMP/$name.out" 2>&1; then
		fail "$name" "record failed: $(tail -1 "$TMP/$name.out")"
		losetup -d "$LOOPDEV"; LOOPDEV=""
		return
	fi
	losetup -d "$LOOPDEV"; LOOPDEV=""

	local fio_ios fio_p50 reads p50 d
	fio_ios=$(jq -r '.jobs[0].read.total_ios' "$fiojson")
	fio_p50=$(jq -r '.jobs[0].read.clat_ns.percentile["50.000000"]' "$fiojson")
	"$IOTRAIL" report --json "$trace" > "$TMP/$name.report.json" 2> "$TMP/$name.err" \
		|| { fail "$name" "report failed: $(head -1 "$TMP/$name.err")"; return; }
	LAST_REPORT=$TMP/$name.report.json
	local sel=".groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\")"
	reads=$(jq -r "[$sel | .count] | add // 0" "$TMP/$name.report.json")
	p50=$(jq -r "[$sel | .latency_ns.p50] | first // 0" "$TMP/$name.report.json")

	[ "$fio_ios" = "$NIOS" ] || { fail "$name" "fio did $fio_ios reads, asked for $NIOS"; return; }
	[ "$reads" = "$fio_ios" ] || { fail "$name" "iotrail counted $reads reads, fio did $fio_ios"; return; }
	d=$(rel_diff "$p50" "$fio_p50")
	awk -v d="$d" 'BEGIN { exit !(d <= 0.15) }' \
		|| { fail "$name" "Q2C p50 $p50 ns vs fio clat p50 $fio_p50 ns: off by $d (> 0.15)"; return; }
	pass "$name (reads $reads == fio $fio_ios; p50 $p50 vs fio $fio_p50 ns, off by $d)"
}

check_run block_fio_none none
LAST_REPORT=""
check_run block_fio_mq-deadline mq-deadline
if [ -n "$LAST_REPORT" ]; then
	# with a scheduler every request is inserted before it is issued
	n=$(jq -r "[.groups[] | select(.key.op == \"read\") | .stages[] | select(.name == \"I2D\")] | length" "$LAST_REPORT")
	[ "$n" -ge 1 ] && pass "block_insert_stage_mq-deadline" \
		|| fail "block_insert_stage_mq-deadline" "no I2D stage in the report with mq-deadline"
fi
check_run block_fio_raw_tp none --hook raw_tp
exit ${FAILED:-0}
