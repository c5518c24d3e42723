#!/usr/bin/env bash
# `iotrail report --html` of a fixture (tests/data/syscall-mixed.trail:
# block and syscall layers), loaded from file:// in headless Chromium
# (Debian's chromium, scripts/install-deps.sh): the page is self-contained
# (no script, no element that fetches, a policy that forbids it), Chromium
# logs no console message (a blocked fetch would be one), and every chart
# of the DOM Chromium built has its marks: a CDF per group with a line per
# stage the JSON report gives the group, every chart's marks as written.
# The screenshot stays for a reviewer: build/test-artifacts/html-report.png
# (and the page beside it). diff --html of two fixtures: its LAD charts
# against the JSON comparison (structure only, not in Chromium); the fabric
# stage chart of nvme-tcp-qd16 against its JSON (structure only).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

[ -x "$IOTRAIL" ] || { skip html_report "$IOTRAIL is not built"; exit 0; }
command -v jq > /dev/null || { skip html_report "jq is not installed (scripts/install-deps.sh)"; exit 0; }
trace=tests/data/syscall-mixed.trail
art=build/test-artifacts
page=$art/html-report.html
mkdir -p "$art"

if ! "$IOTRAIL" report --html -o "$page" "$trace" 2> "$TMP/err"; then
	fail html_report "report --html failed: $(head -1 "$TMP/err")"
	exit 0
fi
"$IOTRAIL" report --json "$trace" > "$TMP/json"

# self-contained: no element that loads anything, no URL but fragment ones
if grep -Eqi '<(script|link|img|iframe|object|embed|audio|video)[ >]|@import|url\([^#]|https?://' "$page"; then
	fail html_self_contained "$(grep -Eoi '<(script|link|img|iframe|object|embed)[^>]*>|@import|url\([^#][^)]*\)|https?://[^ "<]*' "$page" | head -1)"
else
	pass html_self_contained
fi

# "chart-id marks" per chart: the data marks between <svg id=...> and </svg>
chart_marks() {
	tr '<' '\n' < "$1" | awk '
		/^svg id="/ { id = $2; sub(/^id="/, "", id); sub(/"$/, "", id); n[id] = 0; order[++k] = id }
		/class="mark"/ && id != "" { n[id]++ }
		/^\/svg>/ { id = "" }
		END { for (i = 1; i <= k; i++) print order[i], n[order[i]] }'
}
chart_marks "$page" > "$TMP/written"

# the charts the results call for
groups=$(jq '[.groups[] | select(.count > 0)] | length' "$TMP/json")
[ "$groups" -gt 12 ] && groups=12
bad=""
for ((g = 0; g < groups; g++)); do
	want=$(jq "[.groups[$g].stages[] | select(.count > 0)] | length" "$TMP/json")
	got=$(awk -v id="cdf-g$g" '$1 == id { print $2 }' "$TMP/written")
	[ "$got" = "$want" ] || bad="$bad cdf-g$g: $got lines, $want stages;"
done
[ "$(grep -c '^cdf-g' "$TMP/written")" = "$groups" ] || bad="$bad $(grep -c '^cdf-g' "$TMP/written") CDF charts for $groups groups;"
for id in stages-chart iops-d0 mibs-d0 inflight-d0 qd-d0 sizes-d0 calls-threads; do
	grep -q "^$id [1-9]" "$TMP/written" || bad="$bad no marks in $id;"
done
threads=$(jq '[.threads[]] | length' "$TMP/json")
[ "$threads" -gt 8 ] && threads=8
grep -q "^calls-threads $threads\$" "$TMP/written" || bad="$bad calls-threads: not $threads lines;"
if [ -n "$bad" ]; then
	fail html_charts "${bad% ;}"
else
	pass "html_charts ($(wc -l < "$TMP/written") charts, $groups groups)"
fi

# the fabric view (nvme-tcp-qd16: NVMe/TCP initiator and target): a
# stacked bar per opcode, a mark per top stage with time (the JSON's
# by_opcode sum_ns > 0); none on a trace without it (syscall-mixed)
fpage=$art/html-fabric.html
"$IOTRAIL" report --html -o "$fpage" tests/data/nvme-tcp-qd16.trail 2> "$TMP/err"
want=$("$IOTRAIL" report --json tests/data/nvme-tcp-qd16.trail | jq '[.fabric.by_opcode[].stages[] |
	select((.name == "host.block" or .name == "host.out" or .name == "target" or
		.name == "host.in" or .name == "host.done") and .sum_ns > 0)] | length')
got=$(chart_marks "$fpage" | awk '$1 == "fabric-stages" { print $2 }')
if [ -n "$got" ] && [ "$got" = "$want" ] && [ "$want" -gt 0 ] && ! grep -q '^fabric-stages' "$TMP/written"; then
	pass "html_fabric ($got stage bars == the report's fabric stages with time)"
else
	fail html_fabric "fabric-stages marks: '$got', the report's: $want$(grep -q '^fabric-stages' "$TMP/written" && echo '; drawn for syscall-mixed too')"
fi

# diff --html of two fixtures: a LAD chart per group both have, a bar
# pair per stage with a LAD (the JSON comparison's)
"$IOTRAIL" diff --html -o "$art/html-diff.html" tests/data/nvme-tcp-loop.trail tests/data/nvme-tcp-qd16.trail
"$IOTRAIL" diff --json tests/data/nvme-tcp-loop.trail tests/data/nvme-tcp-qd16.trail |
	jq -r '.groups | to_entries[] | select(.value.in == "both") |
		"lad-g\(.key) \(2 * ([.value.stages[] | select(.lad_avg != null or .lad_p50 != null)] | length))"' > "$TMP/lad.want"
chart_marks "$art/html-diff.html" > "$TMP/lad.got"
if [ -s "$TMP/lad.want" ] && diff -q "$TMP/lad.want" "$TMP/lad.got" > /dev/null && grep -q "Bottleneck: stage" "$art/html-diff.html"; then
	pass "html_diff ($(wc -l < "$TMP/lad.got") LAD charts)"
else
	fail html_diff "charts and bars: $(tr '\n' ' ' < "$TMP/lad.got"), want $(tr '\n' ' ' < "$TMP/lad.want")"
fi

# bad use of --html, -o and --url: one line, non-zero exit, nothing half-written
errs=""
one_line_error() { # command...
	"$@" > "$TMP/out" 2> "$TMP/err"
	local rc=$?
	if [ $rc -eq 0 ] || [ $rc -ge 128 ] || [ "$(wc -l < "$TMP/err")" != 1 ] || ! grep -q '^iotrail .*failed to' "$TMP/err"; then
		errs="$errs [$*: exit $rc, $(head -2 "$TMP/err" | tr '\n' '|')]"
	fi
}
one_line_error "$IOTRAIL" report --html --json "$trace"
one_line_error "$IOTRAIL" report -o "$TMP/x.txt" "$trace"
one_line_error "$IOTRAIL" report --html -o "$TMP/no/such/dir.html" "$trace"
one_line_error "$IOTRAIL" diff --html --json "$trace" "$trace"
one_line_error "$IOTRAIL" export --format clickhouse "$trace"
one_line_error "$IOTRAIL" export --format clickhouse --url ftp://x "$trace"
one_line_error "$IOTRAIL" export --format clickhouse --url http://127.0.0.1:1 "$trace"
one_line_error "$IOTRAIL" export --format clickhouse --url http://127.0.0.1:1 --database 'a;b' "$trace"
one_line_error "$IOTRAIL" export --format csv --url http://127.0.0.1:1 "$trace"
if [ -n "$errs" ] || [ -e "$TMP/x.txt" ]; then
	fail html_export_errors "${errs:-report -o without --html wrote $TMP/x.txt}"
else
	pass "html_export_errors (9 cases: one line each, non-zero exit)"
fi

if ! command -v chromium > /dev/null; then
	skip html_chromium "chromium is not installed (scripts/install-deps.sh installs Debian's)"
	exit 0
fi
# no D-Bus here: its address disabled (else Chromium retries it); root needs --no-sandbox
DBUS_SESSION_BUS_ADDRESS=disabled: timeout 120 chromium --headless --no-sandbox --disable-gpu \
	--no-first-run --disable-extensions --user-data-dir="$TMP/profile" \
	--enable-logging=stderr --v=0 --window-size=1200,3000 \
	--screenshot="$art/html-report.png" --dump-dom "file://$PWD/$page" > "$TMP/dom" 2> "$TMP/log"
rc=$?
if [ $rc -ne 0 ] || ! grep -q '</html>' "$TMP/dom"; then
	fail html_chromium "chromium exited $rc without the page's DOM: $(grep -v dbus "$TMP/log" | tail -1)"
	exit 0
fi
if grep -q ':CONSOLE' "$TMP/log"; then
	fail html_chromium "console: $(grep ':CONSOLE' "$TMP/log" | head -1 | cut -c1-200)"
	exit 0
fi
chart_marks "$TMP/dom" > "$TMP/drawn"
if ! diff -q "$TMP/written" "$TMP/drawn" > /dev/null; then
	fail html_chromium "the DOM's marks differ from the page's: $(diff "$TMP/written" "$TMP/drawn" | head -3 | tr '\n' ' ')"
elif [ ! -s "$art/html-report.png" ]; then
	fail html_chromium "no screenshot written"
else
	pass "html_chromium (no console message; $(awk '{ s += $2 } END { print s }' "$TMP/drawn") marks in $(wc -l < "$TMP/drawn") charts; screenshot $art/html-report.png)"
fi
