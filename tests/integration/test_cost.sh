#!/usr/bin/env bash
# `iotrail cost` (issue 16), short: the saturation runs themselves are
# benchmarks (bench/cost_truth.sh checks the figures against a BPF operator
# of known cost; `make test-cost`). Here, in ~12 s:
#   - two 1-second run pairs (no ramp) of --op scheduler=mq-deadline on a loop
#     device whose scheduler was bfq: the JSON's shape (operator, size,
#     runs, interval, k null with one size), the runs' I/O rates against
#     the device's read count (diskstats), the verdict recomputed from the
#     runs (any run >= 5% idle or a spread > 10% must be invalid, with that
#     reason, exit 3; otherwise valid, exit 0), the SVG, and bfq restored;
#   - SIGTERM in the middle of --op fs=ext4 on the built-in loop devices
#     (two per CPU, up to 16, so that no one device's worker holds the
#     CPUs idle): that many made, then no fio left, no loop device, no
#     file system mounted, no scratch directory left;
#   - bad input: one line and exit 2 (no operator, bad size, unknown
#     operator), and the JSON error object under --json;
#   - --compare of two stored results: both sides' figures, the arrows.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

blocker=$(host_blocker)
if [ -n "$blocker" ]; then
	skip cost "$blocker"
	exit 0
fi

bad_input() {
	local rc err=$TMP/bad.err args
	for args in "" "--op scheduler=mq-deadline --sizes 4x" "--op fastest" "--base true" \
		"--op buffered --dev null,/dev/no-such-disk" "--compare only-one.json" \
		"--compare a.json b.json --op buffered"; do
		# shellcheck disable=SC2086
		"$IOTRAIL" cost $args > "$TMP/bad.out" 2> "$err"
		rc=$?
		if [ "$rc" -ne 2 ] || [ "$(wc -l < "$err")" -ne 1 ] || ! grep -q '^iotrail cost: failed to ' "$err"; then
			fail cost_bad_input "'$args': exit $rc, want 2 and one line: $(cat "$err")"
			return
		fi
	done
	"$IOTRAIL" cost --json --op fastest > "$TMP/bad.out" 2> /dev/null
	jq -e '.error | startswith("failed to read --op")' "$TMP/bad.out" > /dev/null \
		|| { fail cost_bad_input "--json: no error object: $(cat "$TMP/bad.out")"; return; }
	pass cost_bad_input
}

short_run() {
	local rc json=$TMP/cost.json want reason
	make_loop 64 bfq || { fail cost_short_run "no loop device"; return; }
	local reads0 reads1 sum
	reads0=$(awk '{ print $1 }' "/sys/block/$LOOPNAME/queue/../stat")
	"$IOTRAIL" cost --dev "$LOOPNAME" --op scheduler=mq-deadline --sizes 4k --runs 2 --seconds 1 --ramp 0 \
		--json --svg "$TMP/opq.svg" > "$json" 2> "$TMP/cost.err"
	rc=$?
	reads1=$(awk '{ print $1 }' "/sys/block/$LOOPNAME/queue/../stat")
	# ground truth for R: the four 1-second runs' I/O rates (no ramp)
	# add up to about the reads the kernel counted on the device
	sum=$(jq '[.operators[0].sizes[0] | .base_runs[], .with_runs[] | .iops] | add' "$json")
	awk -v s="$sum" -v d="$((reads1 - reads0))" 'BEGIN { exit !(d > 0 && s >= 0.85 * d && s <= 1.15 * d) }' \
		|| { fail cost_short_run "runs' I/O per second add up to $sum, the device read $((reads1 - reads0)) in 4 s"; return; }
	grep -q '\[bfq\]' "/sys/block/$LOOPNAME/queue/scheduler" \
		|| { fail cost_short_run "scheduler not restored: $(cat "/sys/block/$LOOPNAME/queue/scheduler")"; return; }
	jq -e '.operators | length == 1 and .[0].name == "scheduler=mq-deadline"
		and (.[0].sizes | length == 1) and .[0].sizes[0].size == 4096
		and (.[0].sizes[0].base_runs | length == 2) and (.[0].sizes[0].with_runs | length == 2)
		and .[0].k == null and .[0].quadrant == "unknown"
		and (.[0].sizes[0].cost_ns_lo <= .[0].sizes[0].cost_ns)
		and (.[0].sizes[0].cost_ns <= .[0].sizes[0].cost_ns_hi)
		and ([.[0].sizes[0].base_runs[], .[0].sizes[0].with_runs[] | .iops > 0 and .ns_per_io > 0] | all)' \
		"$json" > /dev/null || { fail cost_short_run "JSON shape (exit $rc): $(head -c 600 "$json") $(tail -2 "$TMP/cost.err")"; return; }
	# the verdict from the runs themselves: idle, then the spread (sample CV)
	want=$(jq -r '.operators[0].sizes[0] as $s
		| def cv: (add / length) as $m | ((map((. - $m) * (. - $m)) | add) / (length - 1) | sqrt) / $m;
		if ([$s.base_runs[], $s.with_runs[] | .idle_pct] | max) >= 5 then "not saturated"
		elif ([($s.base_runs | map(.ns_per_io) | cv), ($s.with_runs | map(.ns_per_io) | cv)] | max) > 0.10
		then "runs too spread" else "valid" end' "$json")
	reason=$(jq -r '.operators[0].reason // "valid"' "$json")
	case "$want:$rc" in
	valid:0) [ "$reason" = valid ] || { fail cost_short_run "valid runs, but: $reason"; return; } ;;
	valid:*) fail cost_short_run "valid runs, exit $rc"; return ;;
	*:3) [[ "$reason" == *"$want at 4k"* ]] || { fail cost_short_run "want '$want', got: $reason"; return; } ;;
	*) fail cost_short_run "invalid ($want), exit $rc, want 3"; return ;;
	esac
	head -c 5 "$TMP/opq.svg" | grep -q '^<svg ' && tail -1 "$TMP/opq.svg" | grep -q '^</svg>$' \
		|| { fail cost_short_run "no SVG in $TMP/opq.svg"; return; }
	# an operator that formats its devices refuses a device it did not make
	"$IOTRAIL" cost --dev "$LOOPNAME" --op fs=ext4 > /dev/null 2> "$TMP/fs.err"
	rc=$?
	[ "$rc" -eq 2 ] && grep -q "only the loop devices iotrail cost makes" "$TMP/fs.err" \
		|| { fail cost_short_run "fs=ext4 on --dev: exit $rc, $(cat "$TMP/fs.err")"; return; }
	pass "cost_short_run (verdict: $reason)"
}

# the loop devices over iotrail cost's tmpfs files
cost_loops() { losetup -n -O NAME,BACK-FILE 2>/dev/null | awk '/\/dev\/shm\/iotrail-cost\./ { print $1 }' | sort; }

interrupted() {
	local pid before mine left tag=COST_TEST_TAG=$$.$RANDOM
	before=$(cost_loops)
	local dirs0
	dirs0=$(ls -d /tmp/iotrail-cost.* 2>/dev/null)
	env "$tag" "$IOTRAIL" cost --op fs=ext4 --sizes 4k --runs 1 --seconds 5 --ramp 0 > /dev/null 2>&1 &
	pid=$!
	sleep 1.5
	mine=$(comm -13 <(echo "$before") <(cost_loops))
	kill -TERM "$pid"
	wait "$pid"
	sleep 0.5
	[ -n "$mine" ] || { fail cost_interrupted "no loop device of its own seen while it ran"; return; }
	local want ncpu
	ncpu=$(getconf _NPROCESSORS_ONLN)
	want=$((ncpu * 2 > 16 ? 16 : ncpu * 2))
	[ "$(echo "$mine" | wc -l)" -eq "$want" ] \
		|| { fail cost_interrupted "$(echo "$mine" | wc -l) loop devices made, want $want: $mine"; return; }
	# live ones: a zombie has ended (and this container's init may not reap)
	left=$(grep -lzx "$tag" /proc/[0-9]*/environ 2>/dev/null | while read -r e; do
		awk '$3 != "Z" { print $1, $2 }' "${e%/environ}/stat" 2>/dev/null; done)
	[ -z "$left" ] || { fail cost_interrupted "processes left: $left"; return; }
	left=$(comm -12 <(echo "$mine") <(cost_loops))
	[ -z "$left" ] || { fail cost_interrupted "loop device left: $left"; return; }
	left=$(awk '$2 ~ /^\/tmp\/iotrail-cost\./ { print $2 }' /proc/mounts)
	[ -z "$left" ] || { fail cost_interrupted "file system left mounted: $left"; return; }
	left=$(comm -13 <(echo "$dirs0") <(ls -d /tmp/iotrail-cost.* 2>/dev/null))
	[ -z "$left" ] || { fail cost_interrupted "scratch directory left: $left"; return; }
	pass cost_interrupted
}

# two results written by --json (two real runs of kyber and iotrail=block
# here, kept in tests/data) compared: each operator's line with both
# sides' base cost as the files hold it, an arrow per operator with a fit
# in both, and one line for a file that is not a result
compare() {
	local a=tests/data/cost-kyber-block-a.json b=tests/data/cost-kyber-block-b.json out=$TMP/cmp.txt
	local rc arrows want name ca cb
	"$IOTRAIL" cost --compare "$a" "$b" --svg "$TMP/cmp.svg" > "$out" 2> "$TMP/cmp.err"
	rc=$?
	[ "$rc" -eq 0 ] || { fail cost_compare "exit $rc: $(cat "$TMP/cmp.err")"; return; }
	for name in scheduler=kyber iotrail=block; do
		ca=$(jq -r ".operators[] | select(.name == \"$name\") | .base_cost_ns | round" "$a")
		cb=$(jq -r ".operators[] | select(.name == \"$name\") | .base_cost_ns | round" "$b")
		grep -qE "^  $name +$ca ns.* $cb ns" "$out" \
			|| { fail cost_compare "no line '$name $ca ns ... $cb ns' in: $(cat "$out")"; return; }
	done
	want=$(jq -s '[.[0].operators[] | select(.k != null) | .name] as $a
		| [.[1].operators[] | select(.k != null) | .name] as $b | [$a[] | select(. as $n | $b | index($n))] | length' "$a" "$b")
	arrows=$(grep -c 'class="moved"' "$TMP/cmp.svg")
	[ "$arrows" -eq "$want" ] || { fail cost_compare "$arrows arrows in the plot, want $want"; return; }
	"$IOTRAIL" cost --compare "$a" README.md > /dev/null 2> "$TMP/cmp.err"
	rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l < "$TMP/cmp.err")" -eq 1 ] && grep -q "failed to read README.md" "$TMP/cmp.err" \
		|| { fail cost_compare "not a result: exit $rc, $(cat "$TMP/cmp.err")"; return; }
	pass "cost_compare (2 operators side by side, $arrows arrows; a non-result refused in one line)"
}

# --op dm-crypt where the kernel has no device-mapper (this host): one line
# that says so, nothing left (the VM's test_modules.sh runs it for real)
dm_crypt_absent() {
	if [ -e /dev/mapper/control ]; then
		skip cost_dm_crypt_absent "this kernel has device-mapper (tests/vm/test_modules.sh runs --op dm-crypt)"
		return
	fi
	local rc before
	before=$(cost_loops)
	"$IOTRAIL" cost --op dm-crypt --sizes 4k --runs 1 --seconds 1 > /dev/null 2> "$TMP/dm.err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l < "$TMP/dm.err")" -eq 1 ] && grep -q "no device-mapper" "$TMP/dm.err" \
		|| { fail cost_dm_crypt_absent "exit $rc: $(cat "$TMP/dm.err")"; return; }
	[ "$(cost_loops)" = "$before" ] || { fail cost_dm_crypt_absent "loop devices left: $(cost_loops)"; return; }
	pass "cost_dm_crypt_absent ($(cat "$TMP/dm.err"))"
}

bad_input
compare
dm_crypt_absent
short_run
interrupted
exit 0
