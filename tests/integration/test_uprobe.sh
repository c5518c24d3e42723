#!/usr/bin/env bash
# `iotrail record --usdt` and `--uprobe` against build/tests/usdt_demo,
# whose probes fire a known number of times with known arguments:
#  - uprobe_usdt_counts: `usdt_demo 200`: work__start and work__done 200
#    hits each, started 1, demo_step (--uprobe) 200; the span "work" 200
#    times, none open or unmatched;
#  - uprobe_usdt_args: every hit's arguments (report --log): work__start
#    (i, i % 4096 + 1), work__done (i, i % 4096 + 1, fd) for i = 0..199,
#    started none;
#  - uprobe_span_ios: `usdt_demo 50 LOOPDEV` (one 4 KiB O_DIRECT write
#    inside each span) with the block layer: 50 block I/Os inside the
#    spans, in 50 spans, == the device's diskstats writes;
#  - uprobe_bad_input: a malformed --usdt, a missing binary, a probe the
#    binary lacks: one line, non-zero exit.
# Runtime: about 2 s.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NAMES="uprobe_usdt_counts uprobe_usdt_args uprobe_span_ios uprobe_bad_input"
DEMO=$PWD/build/tests/usdt_demo
why=$(host_blocker)
[ -z "$why" ] && [ ! -x "$DEMO" ] && why="$DEMO is not built (make; needs systemtap-sdt-dev)"
[ -z "$why" ] && ! command -v jq > /dev/null && why="jq is not installed (scripts/install-deps.sh)"
if [ -n "$why" ]; then
	for t in $NAMES; do skip $t "$why"; done
	exit 0
fi
trap cleanup EXIT

P="--usdt $DEMO:iotrail_demo:work__start --usdt $DEMO:iotrail_demo:work__done"
P="$P --usdt $DEMO:iotrail_demo:started:begin --uprobe $DEMO:demo_step"

# ---- counts and arguments
# the demo's file descriptor: the lowest this shell leaves free (the
# demo inherits the shell's through iotrail, which must add none: 3 unless
# the harness holds one, as flock(1) does)
demo_fd=0
while [ -e "/proc/$$/fd/$demo_fd" ]; do demo_fd=$((demo_fd + 1)); done
if ! "$IOTRAIL" record --layers uprobe -o "$TMP/u.trail" $P -- "$DEMO" 200 > "$TMP/rec.out" 2>&1; then
	fail uprobe_usdt_counts "record failed: $(tail -1 "$TMP/rec.out")"
	exit 1
fi
"$IOTRAIL" report --json "$TMP/u.trail" > "$TMP/u.json" 2> "$TMP/err" ||
	{ fail uprobe_usdt_counts "report --json failed: $(tail -1 "$TMP/err")"; exit 1; }
got=$(jq -r '([.uprobes.probes[] | "\(.label)=\(.hits)"] | join(" "))
	+ " | " + ([.uprobes.spans[] | "\(.name)=\(.count)/\(.open)/\(.unmatched)"] | join(" "))
	+ " | lost=\(.uprobes.lost)"' "$TMP/u.json")
want="work__start=200 work__done=200 begin=1 demo_step=200 | work=200/0/0 | lost=0"
[ "$got" = "$want" ] && pass "uprobe_usdt_counts ($want)" ||
	fail uprobe_usdt_counts "got '$got', want '$want'"

"$IOTRAIL" report --log "$TMP/u.trail" > "$TMP/u.log" 2> "$TMP/err"
want_args=$(for i in $(seq 0 199); do
	echo "work__start args=$i,$((i % 4096 + 1))"
	echo "work__done args=$i,$((i % 4096 + 1)),$demo_fd"; done)
got_args=$(awk '$4 == "work__start" || $4 == "work__done" { print $4, $5 }' "$TMP/u.log")
noargs=$(awk '($4 == "begin" || $4 == "demo_step") && NF == 4' "$TMP/u.log" | wc -l)
if [ "$got_args" = "$want_args" ] && [ "$noargs" = 201 ]; then
	pass "uprobe_usdt_args (400 hits, each with its (i, len[, fd]); begin and demo_step without)"
else
	fail uprobe_usdt_args "$(diff <(echo "$want_args") <(echo "$got_args") | head -4 | tr '\n' ' '); hits without arguments: $noargs of 201"
fi

# ---- the block I/Os inside each span
make_loop 16 || { fail uprobe_span_ios "cannot set up a loop device"; exit 1; }
if ! "$IOTRAIL" record --layers block,uprobe --dev "$LOOPNAME" -o "$TMP/s.trail" $P -- \
	"$DEMO" 50 "$LOOPDEV" > "$TMP/rec.out" 2>&1; then
	fail uprobe_span_ios "record failed: $(tail -1 "$TMP/rec.out")"
else
	"$IOTRAIL" report --json "$TMP/s.trail" > "$TMP/s.json" 2> "$TMP/err"
	got=$(jq -r '.uprobes.spans[] | select(.name == "work") | "\(.count) \(.block_ios) \(.spans_with_io)"' "$TMP/s.json")
	dw=$(jq -r --arg d "$LOOPNAME" '.diskstats[$d].writes // -1' "$TMP/s.json")
	if [ "$got" = "50 50 50" ] && [ "$dw" = 50 ]; then
		pass "uprobe_span_ios (50 spans, 50 block I/Os inside them, each span one; diskstats writes $dw)"
	else
		fail uprobe_span_ios "spans, I/Os inside, spans with I/O: '$got' (want '50 50 50'); diskstats writes $dw"
	fi
fi

# ---- bad input: one line, non-zero exit
bad() { # pattern args...
	local pat=$1 rc
	shift
	"$IOTRAIL" record --layers uprobe -o "$TMP/bad.trail" "$@" -- true > /dev/null 2> "$TMP/bad.err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$(wc -l < "$TMP/bad.err")" -eq 1 ] && grep -q "$pat" "$TMP/bad.err" ||
		{ echo "$* exit $rc: $(head -2 "$TMP/bad.err" | tr '\n' ' ')"; return 1; }
}
msg=$(bad "expected BINARY:PROVIDER:NAME" --usdt "$DEMO:iotrail_demo" &&
	bad "cannot read" --usdt "$TMP/missing:a:b" &&
	bad "no such probe" --usdt "$DEMO:iotrail_demo:nonesuch" &&
	bad "no such function" --uprobe "$DEMO:nonesuch")
[ -z "$msg" ] && pass "uprobe_bad_input (malformed, missing binary, no such probe or function: one line, exit non-zero)" ||
	fail uprobe_bad_input "$msg"
exit ${FAILED:-0}
