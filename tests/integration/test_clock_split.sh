#!/usr/bin/env bash
# Two machines, one trace, against ground truth: the single-machine NVMe/TCP
# loopback fixtures split by build/tests/split_trace into the two-machine
# file `record --target` writes (machine 0 the host's events, machine 1 the
# target's: nvmet, nvmet-tcp, the backing disk's block events), the
# target's clock moved by a known offset (+3.7 s) and drift (+50 ppm).
# Checks, for tests/data/nvme-tcp-r2t.trail (transport layers) and
# nvme-tcp-loop.trail (commands only):
#   - the estimated offset is within its reported uncertainty of the
#     injected one (at the time the estimate names), the drift within its
#     reported bound of +50 ppm (r2t; the loop trace is too short to bound it);
#   - >= 99.9% of the matched I/Os are causal on the merged timeline;
#   - the join is the single-machine one: same matched count; the stages on
#     the initiator's clock alone equal to the nanosecond; the target's own
#     stages within 2 ns per I/O plus the drift error's share of their sum
#     (the estimate's distance to +50 ppm and its bound; +50 ppm when the
#     trace is too short to estimate it); host.out + host.in (the stages
#     across both clocks) the same way;
#   - a CLOCK chunk wrong by 2 s is corrected (and said to disagree);
#   - no target command and no CLOCK: the estimate is impossible, said in
#     one line, exit 0; no target command with a CLOCK: the exchange is the
#     estimate;
#   - report --machine 1 shows the target alone; iotrail diff reads the
#     merged file (one file twice: every LAD 1);
#   - three machines (split_trace --decoy: machine 1 a decoy target with no
#     nvmet events, machine 2 the real one, each with its NVMF records):
#     the controller is mapped to machine 2 by its address and subsystem,
#     the join and the estimate are the two-machine file's; the real
#     target's port at another address: no machine serves the controller,
#     its 100 writes are the initiator's alone, nothing matched;
#   - the clock estimate stored in the file (split_trace --store-clock, the
#     code record --target runs at its end): the report uses it and says
#     so, and its fabric view is the recomputing one's to the nanosecond;
#     a stored offset 1 ms off shows 1 ms off (it is used, not recomputed),
#     and report --recompute-clock ignores it;
#   - a long trace (the r2t recording 300 times over, 27 minutes) whose
#     target clock drifts -200 ppm, 2 s from its CLOCK chunk: every I/O
#     matched and causal, the drift within its bound.
# The drift is the estimate's: how fast the target's clock gains per
# second of its own, PPM / (1 + PPM / 1e6) for split_trace's PPM.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

SPLIT=${SPLIT:-$PWD/build/tests/split_trace}
OFFSET=3700000000
PPM=50

for t in "$IOTRAIL" "$SPLIT"; do
	[ -x "$t" ] || { skip clock_split "$t is not built (run make)"; exit 0; }
done
command -v jq > /dev/null || { skip clock_split "jq is not installed (scripts/install-deps.sh)"; exit 0; }

# within GOT WANT TOL: |GOT - WANT| <= TOL (decimals)
within() { awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'; }

# The drift the estimate names for split_trace's PPM (per second of the target).
drift_of() { awk -v p="$1" 'BEGIN { printf "%.6f\n", p / (1 + p * 1e-6) }'; }

# The true offset (machine 0 = machine 1 + offset) at target time T: the
# target reads h + OFFSET + PPM * (h - start) / 1e6 at machine 0's time h.
true_offset() { # T START [PPM]
	awk -v T="$1" -v s="$2" -v o="$OFFSET" -v p="${3:-$PPM}" \
		'BEGIN { h = (T - o + p * 1e-6 * s) / (1 + p * 1e-6); printf "%.0f\n", h - T }'
}

check_trace() {
	local name=$1 drift=$2 orig=tests/data/$1.trail split=$TMP/$1-split.trail
	local j=$TMP/$1.json oj=$TMP/$1.orig.json c truth

	"$SPLIT" "$orig" "$split" --offset "$OFFSET" --drift-ppm "$PPM" \
		|| { fail "clock_split_$name" "split_trace failed"; return; }
	"$IOTRAIL" report --json "$split" > "$j" 2> "$TMP/err" \
		|| { fail "clock_split_$name" "report failed: $(cat "$TMP/err")"; return; }
	"$IOTRAIL" report --json "$orig" > "$oj"
	c=$(jq -c '.fabric.cross.clock' "$j")
	truth=$(true_offset "$(jq -r .at_target_ns <<< "$c")" "$HOST_START")
	if jq -e '.method == "matched-io"' <<< "$c" > /dev/null &&
	   within "$(jq -r .offset_ns <<< "$c")" "$truth" "$(jq -r .uncertainty_ns <<< "$c")"; then
		pass "clock_split_${name}_offset (estimate $(jq -r .offset_ns <<< "$c") ns, truth $truth ns, +- $(jq -r .uncertainty_ns <<< "$c") ns)"
	else
		fail "clock_split_${name}_offset" "truth $truth ns, estimate $c"
	fi
	if [ "$drift" = yes ]; then
		if jq -e '.drift_ppm != null' <<< "$c" > /dev/null &&
		   within "$(jq -r .drift_ppm <<< "$c")" "$(drift_of "$PPM")" "$(jq -r .drift_bound_ppm <<< "$c")"; then
			pass "clock_split_${name}_drift ($(jq -r .drift_ppm <<< "$c") ppm +- $(jq -r .drift_bound_ppm <<< "$c"), injected $PPM)"
		else
			fail "clock_split_${name}_drift" "injected $PPM ppm, estimate $c"
		fi
	fi
	if jq -e '.fabric.matched > 0 and .fabric.cross.causality.checked == .fabric.matched and
		  (.fabric.cross.causality.noncausal_out + .fabric.cross.causality.noncausal_back)
		  <= 0.001 * .fabric.cross.causality.checked' "$j" > /dev/null; then
		pass "clock_split_${name}_causal ($(jq -c .fabric.cross.causality "$j"))"
	else
		fail "clock_split_${name}_causal" "$(jq -c '{matched: .fabric.matched, c: .fabric.cross.causality}' "$j")"
	fi
	# the target's durations are its clock's, scaled by the estimated drift:
	# off by the drift's error (the injected one when none was estimated)
	stages_match "$name" "$oj" "$j" "$(jq -r --argjson p "$PPM" \
		'((.drift_ppm // 0) - $p | if . < 0 then -. else . end) + (.drift_bound_ppm // 0)' <<< "$c")"
}

# stages_match NAME ORIG.json SPLIT.json DRIFT_ERROR_PPM
stages_match() {
	local bad
	bad=$(jq -n -r --slurpfile o "$2" --slurpfile s "$3" --argjson b "$4" '
		def st(f; op): [f.fabric.by_opcode[op].stages[] | {(.name): .}] | add;
		def tol(x): 2 * x.count + $b * 1e-6 * x.sum_ns;
		def abs: if . < 0 then -. else . end;
		($o[0].fabric.by_opcode | keys) as $ops
		| if $o[0].fabric.matched != $s[0].fabric.matched or ($s[0].fabric.by_opcode | keys) != $ops
		  then "matched \($o[0].fabric.matched) vs \($s[0].fabric.matched)" else
		  $ops[] as $op | st($o[0]; $op) as $a | st($s[0]; $op) as $z
		  | (["host.block", "host.queue", "host.send", "host.complete", "host.done", "command", "io"][]
		     | select($a[.] != null)
		     | select($a[.].count != $z[.].count or $a[.].sum_ns != $z[.].sum_ns)
		     | "\($op) \(.): \($a[.].sum_ns) vs \($z[.].sum_ns // null)"),
		    (["target", "target.queue", "target.dev", "tdev.submit", "tdev.q2d", "tdev.d2c",
		      "tdev.done", "target.sendq", "target.send"][]
		     | select($a[.] != null)
		     | select($a[.].count != $z[.].count or (($a[.].sum_ns - $z[.].sum_ns) | abs) > tol($a[.]))
		     | "\($op) \(.): \($a[.].sum_ns) vs \($z[.].sum_ns // null)"),
		    (select($a["host.out"] != null)
		     | ($a["host.out"].sum_ns + $a["host.in"].sum_ns) as $x
		     | ($z["host.out"].sum_ns + $z["host.in"].sum_ns) as $y
		     | select((($x - $y) | abs) > tol($a["target"]))
		     | "\($op) host.out + host.in: \($x) vs \($y)")
		  end')
	if [ -z "$bad" ]; then
		pass "clock_split_${1}_stages (matched $(jq .fabric.matched "$3"), as one machine)"
	else
		fail "clock_split_${1}_stages" "$(echo "$bad" | head -5 | tr '\n' ';')"
	fi
}

# The recording's start on machine 0's clock (split_trace's drift reference).
host_start() {
	"$IOTRAIL" report --json "$1" | jq -r '.host.start_monotonic_ns // empty'
}

wrong_exchange() {
	local split=$TMP/wrong.trail j=$TMP/wrong.json c truth
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --drift-ppm "$PPM" \
		--exchange-error 2000000000 || { fail clock_split_wrong_exchange "split_trace failed"; return; }
	"$IOTRAIL" report --json "$split" > "$j"
	c=$(jq -c '.fabric.cross.clock' "$j")
	truth=$(true_offset "$(jq -r .at_target_ns <<< "$c")" "$HOST_START")
	if within "$(jq -r .offset_ns <<< "$c")" "$truth" "$(jq -r .uncertainty_ns <<< "$c")" &&
	   jq -e '.fabric.matched == 104' "$j" > /dev/null &&
	   "$IOTRAIL" report "$split" | grep -q "agent exchange: .* disagrees: the matched I/Os' estimate is used"; then
		pass "clock_split_wrong_exchange (CLOCK off by 2 s: estimate $(jq -r .offset_ns <<< "$c") ns, truth $truth ns)"
	else
		fail clock_split_wrong_exchange "truth $truth, $(jq -c '{m: .fabric.matched, c: .fabric.cross.clock}' "$j")"
	fi
}

no_io() {
	local split=$TMP/noio.trail out=$TMP/noio.out rc
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --no-nvmet --no-clock \
		|| { fail clock_split_impossible "split_trace failed"; return; }
	"$IOTRAIL" report "$split" > "$out" 2> "$TMP/err"
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(grep -c 'clock: no estimate (no matched I/O, no agent exchange)' "$out")" -eq 1 ] &&
	   "$IOTRAIL" report --json "$split" | jq -e '.fabric.cross.clock.method == "none" and .fabric.matched == 0' > /dev/null; then
		pass clock_split_impossible
	else
		fail clock_split_impossible "exit $rc: $(grep -i clock "$out" | head -3)"
	fi
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --no-nvmet \
		|| { fail clock_split_exchange_only "split_trace failed"; return; }
	if "$IOTRAIL" report --json "$split" | jq -e --argjson o "$OFFSET" '.fabric.cross.clock |
		.method == "agent-exchange" and .offset_ns == -$o and .uncertainty_ns == 50000' > /dev/null; then
		pass clock_split_exchange_only
	else
		fail clock_split_exchange_only "$("$IOTRAIL" report --json "$split" | jq -c .fabric.cross.clock)"
	fi
}

machine1_and_diff() {
	local split=$TMP/nvme-tcp-r2t-split.trail
	if "$IOTRAIL" report --json --machine 1 "$split" |
	   jq -e '.fabric.target_commands == 104 and .fabric.matched == 0 and
		  ([.fabric.target_alone[].count] | add) == 100' > /dev/null; then
		pass clock_split_machine1
	else
		fail clock_split_machine1 "$("$IOTRAIL" report --json --machine 1 "$split" | jq -c '.fabric | {target_commands, matched}')"
	fi
	if "$IOTRAIL" diff --json "$split" "$split" > "$TMP/diff.json" 2> "$TMP/err" &&
	   jq -e '[.groups[] | select(.key.layer == "fabric") | .stages[] | select(.name == "net.back")
		   | .lad_p50] == [1] and
		  ([.. | objects | select(has("lad_p50")) | .lad_p50 | select(. != null)] | all(. == 1))' \
		"$TMP/diff.json" > /dev/null; then
		pass clock_split_diff
	else
		fail clock_split_diff "$(head -c 300 "$TMP/diff.json") $(cat "$TMP/err")"
	fi
}

HOST_START=$(host_start tests/data/nvme-tcp-r2t.trail)
[ -n "$HOST_START" ] || { fail clock_split "no start time in the report's JSON"; exit 1; }
check_trace nvme-tcp-r2t yes
wrong_exchange
no_io
machine1_and_diff
long_drift() {
	local split=$TMP/long.trail j=$TMP/long.json c want truth
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --drift-ppm -200 \
		--exchange-error 2000000000 --repeat 300 || { fail clock_split_long "split_trace failed"; return; }
	"$IOTRAIL" report --json "$split" > "$j" || { fail clock_split_long "report failed"; return; }
	c=$(jq -c .fabric.cross.clock "$j")
	want=$(drift_of -200)
	truth=$(true_offset "$(jq -r .at_target_ns <<< "$c")" "$HOST_START" -200)
	if within "$(jq -r .offset_ns <<< "$c")" "$truth" "$(jq -r .uncertainty_ns <<< "$c")" && jq -e '.fabric.matched == 31200 and .fabric.cross.causality.checked == 31200 and
		  .fabric.cross.causality.noncausal_out + .fabric.cross.causality.noncausal_back == 0' \
		"$j" > /dev/null && within "$(jq -r .drift_ppm <<< "$c")" "$want" "$(jq -r .drift_bound_ppm <<< "$c")"; then
		pass "clock_split_long (31200 matched, all causal, drift $(jq -r .drift_ppm <<< "$c") +- $(jq -r .drift_bound_ppm <<< "$c") ppm, truth $want; offset $(jq -r .offset_ns <<< "$c") +- $(jq -r .uncertainty_ns <<< "$c") ns, truth $truth)"
	else
		fail clock_split_long "truth $truth: $(jq -c '{m: .fabric.matched, c: .fabric.cross.causality}' "$j") $c"
	fi
}

long_drift

three_machines() {
	local split=$TMP/decoy.trail j=$TMP/decoy.json two=$TMP/nvme-tcp-r2t.json
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --drift-ppm "$PPM" --decoy \
		|| { fail clock_split_three_machines "split_trace failed"; return; }
	"$IOTRAIL" report --json "$split" > "$j" || { fail clock_split_three_machines "report failed"; return; }
	if jq -e --slurpfile t "$two" '.fabric.cross.target_machine == 2 and
		  .fabric.cross.controllers == [{ctrl: 0, transport: "tcp", traddr: "127.0.0.1",
			trsvcid: "4420", subsysnqn: "nqn.2024-01.io.iotrail:split", machine: 2,
			ambiguous: false, joined: true}] and
		  .fabric.matched == $t[0].fabric.matched and
		  .fabric.cross.clock.offset_ns == $t[0].fabric.cross.clock.offset_ns and
		  .fabric.by_opcode == $t[0].fabric.by_opcode' "$j" > /dev/null &&
	   "$IOTRAIL" report "$split" | grep -q "controller nvme0 (tcp 127.0.0.1:4420 nqn.2024-01.io.iotrail:split) -> machine 2, joined"; then
		pass "clock_split_three_machines (nvme0 -> machine 2 by its port, past the decoy machine 1: $(jq .fabric.matched "$j") matched, the two-machine file's join and estimate)"
	else
		fail clock_split_three_machines "$(jq -c '{m: .fabric.matched, x: .fabric.cross | {target_machine, controllers, off: .clock.offset_ns}}' "$j")"
	fi
	# --join N: the user picks the target machine joined (here the decoy,
	# which serves no controller: nvme0 stays the initiator's alone, and
	# the text says which --join would join it)
	"$IOTRAIL" report --json --join 1 "$split" > "$j.join1"
	"$IOTRAIL" report --join 1 "$split" > "$j.join1.txt"
	if jq -e '.fabric.cross.target_machine == 1 and .fabric.cross.controllers[0].machine == 2 and
		  .fabric.cross.controllers[0].joined == false and .fabric.matched == 0 and
		  .fabric.initiator_alone.write.count == 100' "$j.join1" > /dev/null &&
	   grep -q "machine 2, not joined here" "$j.join1.txt" &&
	   ! awk 'length > 100 { bad = 1 } END { exit !bad }' "$j.join1.txt" && grep -q "iotrail report --join 2 joins it" "$j.join1.txt"; then
		pass "clock_split_join_option (report --join 1 joins the decoy: nvme0's 100 writes the initiator's alone, the text names --join 2, in 100 columns)"
	else
		fail clock_split_join_option "$(jq -c '{m: .fabric.matched, x: .fabric.cross | {target_machine, controllers}}' "$j.join1")"
	fi
	local e1 e2 r1 r2
	e1=$("$IOTRAIL" report --join 7 "$split" 2>&1 >/dev/null); r1=$?
	e2=$("$IOTRAIL" report --join 2 --machine 1 "$split" 2>&1 >/dev/null); r2=$?
	if [ $r1 = 2 ] && [ $r2 = 2 ] && [ "$(printf '%s\n' "$e1" | wc -l)" = 1 ] &&
	   [ "$(printf '%s\n' "$e2" | wc -l)" = 1 ] && grep -q "ids 0 to 2" <<< "$e1" &&
	   grep -q "goes with machine 0" <<< "$e2"; then
		pass "clock_split_join_refused (a machine the file lacks, and --join with --machine: one line, exit 2)"
	else
		fail clock_split_join_refused "exit $r1: $e1 | exit $r2: $e2"
	fi
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --drift-ppm "$PPM" --decoy \
		--real-port 10.98.0.1 || { fail clock_split_unserved "split_trace failed"; return; }
	"$IOTRAIL" report --json "$split" > "$j"
	if jq -e '.fabric.cross.controllers[0].machine == null and .fabric.matched == 0 and
		  .fabric.initiator_alone.write.count == 100' "$j" > /dev/null &&
	   "$IOTRAIL" report "$split" | grep -q "nvme0 .* -> no recorded machine serves it: the initiator's stages only"; then
		pass "clock_split_unserved (no machine's port serves nvme0: its 100 writes the initiator's alone)"
	else
		fail clock_split_unserved "$(jq -c '{m: .fabric.matched, c: .fabric.cross.controllers, a: .fabric.initiator_alone.write.count}' "$j")"
	fi
}

three_machines

stored_clock() {
	local split=$TMP/stored.trail
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --drift-ppm "$PPM" \
		--store-clock || { fail clock_split_stored "split_trace failed"; return; }
	"$IOTRAIL" report --json "$split" | jq -S '.fabric' > "$TMP/stored.json"
	"$IOTRAIL" report --json "$TMP/nvme-tcp-r2t-split.trail" | jq -S '.fabric' > "$TMP/recomputed.json"
	if jq -e --slurpfile r "$TMP/recomputed.json" '.cross.clock.stored == true and
		  (.cross.clock | del(.stored)) == $r[0].cross.clock and del(.cross.clock) == ($r[0] | del(.cross.clock))' \
		"$TMP/stored.json" > /dev/null &&
	   "$IOTRAIL" report "$split" | grep -q "clock (matched-io, stored by record): "; then
		pass "clock_split_stored (the stored estimate used and said so; the fabric view equal to the recomputed one)"
	else
		fail clock_split_stored "$(diff <(jq .cross.clock "$TMP/stored.json") <(jq .cross.clock "$TMP/recomputed.json") | head -5 | tr '\n' ' ')"
	fi
	"$SPLIT" tests/data/nvme-tcp-r2t.trail "$split" --offset "$OFFSET" --drift-ppm "$PPM" \
		--store-clock --stored-error 1000000 || { fail clock_split_stored_used "split_trace failed"; return; }
	if "$IOTRAIL" report --json "$split" | jq -e --slurpfile r "$TMP/recomputed.json" \
		'.fabric.cross.clock.offset_ns == $r[0].cross.clock.offset_ns + 1000000' > /dev/null &&
	   "$IOTRAIL" report --recompute-clock --json "$split" | jq -e --slurpfile r "$TMP/recomputed.json" \
		'.fabric.cross.clock.offset_ns == $r[0].cross.clock.offset_ns and .fabric.cross.clock.stored == null' > /dev/null; then
		pass "clock_split_stored_used (a stored offset 1 ms off is the report's offset; --recompute-clock ignores it)"
	else
		fail clock_split_stored_used "$("$IOTRAIL" report --json "$split" | jq -c .fabric.cross.clock)"
	fi
}

stored_clock
HOST_START=$(host_start tests/data/nvme-tcp-loop.trail)
check_trace nvme-tcp-loop no
exit ${FAILED:-0}
