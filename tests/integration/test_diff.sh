#!/usr/bin/env bash
# `iotrail diff` against ground truth: the same few hundred direct 4K reads
# (fio, psync, queue depth 1) traced on a loop device over a tmpfs file
# (base: ~10 us per read) and on a loop device over a slowfs FUSE file
# whose reads sleep DELAY_US (loaded). The two are different devices, so
# the groups are by op only. Checks:
#   - the bottleneck is D2C (the delay is issued -> completed), in text and JSON;
#   - the loaded D2C p50 is >= the injected delay, the base one below it;
#   - the read group is matched in both traces, and every group is;
#   - bad input: a missing file is one line on stderr and exit 1; a file that
#     is not a trace the same; a missing argument exit 2; one trace twice is
#     allowed (every LAD 1).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

DELAY_US=${DELAY_US:-300}
NIOS=${NIOS:-400}

# ge A B: A >= B (decimals)
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

bad_input() {
	local out=$TMP/bad.out err=$TMP/bad.err rc
	"$IOTRAIL" diff "$TMP/missing.trail" "$TMP/missing2.trail" > "$out" 2> "$err"
	rc=$?
	[ "$rc" -eq 1 ] || { fail diff_bad_input "missing file: exit $rc, want 1"; return; }
	[ "$(wc -l < "$err")" -eq 1 ] && [ ! -s "$out" ] \
		|| { fail diff_bad_input "missing file: want one line on stderr, got: $(cat "$err" "$out")"; return; }
	grep -q "^iotrail diff: failed to read $TMP/missing.trail: " "$err" \
		|| { fail diff_bad_input "missing file: the line does not name it: $(cat "$err")"; return; }
	"$IOTRAIL" diff --json README.md README.md > "$out" 2> "$err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l < "$err")" -eq 1 ] && jq -e '.error | test("not an iotrail trace")' \
		"$out" > /dev/null \
		|| { fail diff_bad_input "not a trace: exit $rc, stderr $(cat "$err"), stdout $(cat "$out")"; return; }
	"$IOTRAIL" diff README.md > "$out" 2> "$err"
	rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l < "$err")" -eq 1 ] \
		|| { fail diff_bad_input "one argument: exit $rc, want 2: $(cat "$err")"; return; }
	"$IOTRAIL" diff --help | grep -q '^usage: iotrail diff' \
		|| { fail diff_bad_input "--help prints no usage"; return; }
	pass "diff_bad_input (missing file, not a trace: one line, exit 1; one argument: exit 2)"
}

bad_input

why=$(host_blocker)
[ -n "$why" ] || why=$(slow_loop_blocker)
if [ -n "$why" ]; then
	skip diff_d2c_bottleneck "$why"
	skip diff_same_trace "$why"
	exit ${FAILED:-0}
fi

record() { # trace out fiojson
	"$IOTRAIL" record -o "$1" --layers block --dev "$LOOPNAME" -- \
		fio --name=diff --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --number_ios="$NIOS" --size=60M \
		--output-format=json --output="$3" > "$2" 2>&1
}

run() {
	local base=$TMP/base.trail loaded=$TMP/loaded.trail delay_ns=$((DELAY_US * 1000))
	local js=$TMP/diff.json txt=$TMP/diff.txt

	make_loop 64 none || { fail diff_d2c_bottleneck "cannot set up a tmpfs loop device"; return; }
	record "$base" "$TMP/base.out" "$TMP/base.fio.json" \
		|| { fail diff_d2c_bottleneck "base record failed: $(tail -1 "$TMP/base.out")"; return; }
	losetup -d "$LOOPDEV"
	LOOPDEV=""
	make_slow_loop "$DELAY_US" 64 none 2> "$TMP/setup" \
		|| { fail diff_d2c_bottleneck "cannot set up a slowfs loop device: $(tail -1 "$TMP/setup")"
		     return; }
	record "$loaded" "$TMP/loaded.out" "$TMP/loaded.fio.json" \
		|| { fail diff_d2c_bottleneck "loaded record failed: $(tail -1 "$TMP/loaded.out")"
		     drop_slow_loop; return; }
	drop_slow_loop

	"$IOTRAIL" diff --group-by op "$base" "$loaded" > "$txt" 2> "$TMP/diff.err" \
		|| { fail diff_d2c_bottleneck "diff failed: $(head -1 "$TMP/diff.err")"; return; }
	"$IOTRAIL" diff --json --group-by op "$base" "$loaded" > "$js" 2> "$TMP/diff.err" \
		|| { fail diff_d2c_bottleneck "diff --json failed: $(head -1 "$TMP/diff.err")"; return; }
	jq -e . "$js" > /dev/null || { fail diff_d2c_bottleneck "diff --json is not JSON"; return; }

	local line bn in_all d2c_l d2c_b lad n_l
	line=$(head -1 "$txt")
	bn=$(jq -r '.bottleneck.stage // "none"' "$js")
	in_all=$(jq -r '[.groups[].in] | unique | join(",")' "$js")
	local sel='.groups[] | select(.key.op == "read" and .in == "both") | .stages[] | select(.name == "D2C")'
	d2c_b=$(jq -r "[$sel | .base.p50_ns] | first // empty" "$js")
	d2c_l=$(jq -r "[$sel | .loaded.p50_ns] | first // empty" "$js")
	n_l=$(jq -r "[$sel | .loaded.count] | first // empty" "$js")
	lad=$(jq -r "[$sel | .lad_p50] | first // empty" "$js")

	case $line in
	"bottleneck: D2C of read: LAD "*) ;;
	*) fail diff_d2c_bottleneck "text names another bottleneck: '$line'"; return ;;
	esac
	[ "$bn" = D2C ] || { fail diff_d2c_bottleneck "JSON bottleneck is $bn, want D2C"; return; }
	[ "$in_all" = both ] || { fail diff_d2c_bottleneck "groups not matched in both traces: $in_all"; return; }
	[ -n "$d2c_l" ] || { fail diff_d2c_bottleneck "no D2C of reads in both traces"; return; }
	# BPF, like perf, misses a completion now and then with nothing counted
	# (issue 11, README's Known problems). The report counts such an I/O
	# from its request's reuse (no completion time: not in D2C), or, when
	# the request is not reused, says the kernel's diskstats has it and the
	# trace lacks it. Exact: in D2C + counted from reuse + lacking == fio's.
	local lack reuse
	"$IOTRAIL" report --json "$loaded" > "$TMP/loaded.json" 2> "$TMP/report.err" \
		|| { fail diff_d2c_bottleneck "report failed: $(head -1 "$TMP/report.err")"; return; }
	lack=$(jq -r ".diskstats[\"$LOOPNAME\"].window.lacking.reads // 0" "$TMP/loaded.json")
	reuse=$(jq -r ".diskstats[\"$LOOPNAME\"].window.from_reuse.reads // 0" "$TMP/loaded.json")
	[ $((n_l + reuse + lack)) -eq "$NIOS" ] && [ $((reuse + lack)) -le 2 ] \
		|| { fail diff_d2c_bottleneck "loaded D2C has $n_l reads, the report counts $reuse from their request's reuse and lacks $lack, fio did $NIOS"
		     return; }
	ge "$d2c_l" "$delay_ns" \
		|| { fail diff_d2c_bottleneck "loaded D2C p50 $d2c_l ns is below the injected delay $delay_ns ns"
		     return; }
	ge "$delay_ns" "$d2c_b" \
		|| { fail diff_d2c_bottleneck "base D2C p50 $d2c_b ns is above the delay: the base is not fast"
		     return; }
	pass "diff_d2c_bottleneck (delay $delay_ns ns; D2C p50 $d2c_b ns -> $d2c_l ns, LAD at p50 $lad; $n_l reads + $reuse counted from reuse + $lack lacking == fio's $NIOS; $line)"

	"$IOTRAIL" diff --json "$base" "$base" > "$TMP/same.json" 2> "$TMP/same.err" \
		|| { fail diff_same_trace "diff of a trace with itself failed: $(head -1 "$TMP/same.err")"; return; }
	jq -e '[.groups[] | .stages[] | .lad_avg] | length > 0 and all(. == 1)' "$TMP/same.json" > /dev/null \
		&& pass "diff_same_trace (every LAD 1)" \
		|| fail diff_same_trace "a trace against itself: LADs not all 1"
}

run
exit ${FAILED:-0}
