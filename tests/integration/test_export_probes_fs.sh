#!/usr/bin/env bash
# User-space probe events and F2FS events in every exporter, on fixtures
# (no recording, no root):
#   - tests/data/usdt-demo.trail: build/tests/usdt_demo 50 recorded on the
#     host with --layers block,uprobe, its started, work__start and
#     work__done probes (USDT, with arguments) and demo_step (a uprobe);
#   - tests/data/f2fs-gc.trail: two F2FS GC rounds (one moving two files'
#     data from zone 10 to zone 11) and two checkpoints, recorded in the
#     test VM (test_golden.sh says how).
# For each: csv --what probes|fs has the report's counts (rows per kind ==
# the report's hits per probe, spans, GC rounds, files moved, checkpoints,
# wake-ups; each row the header's field count; a span row's duration the
# report's durations: their sum ~ avg_ns x count, their max its max_ns) and
# is byte for byte tests/data/golden/NAME.csv-probes|csv-fs.out; the
# Perfetto trace decodes (tests/tools/check_perfetto.py: slices and
# instants against the same report). ClickHouse's rows: tests/unit
# (test_clickhouse.c: probes and f2fs_events rows decoded).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NAMES="export_probes_csv export_probes_perfetto export_fs_csv export_fs_perfetto"
why=""
[ -x "$IOTRAIL" ] || why="$IOTRAIL is not built (run make)"
command -v jq > /dev/null || why=${why:-"jq is not installed (scripts/install-deps.sh)"}
command -v python3 > /dev/null || why=${why:-"python3 is missing"}
if [ -n "$why" ]; then
	for t in $NAMES; do skip $t "$why"; done
	exit 0
fi

# the CSV's data rows when each has the header's field count, else "bad row N"
csv_rows() {
	awk -F, 'NR == 1 { n = NF; next } NF != n { print "bad row " NR; bad = 1; exit }
		 END { if (!bad) print NR - 1 }' "$1"
}
golden() { # name csv golden
	if ! cmp -s "$2" "$3"; then
		fail "$1" "differs from $3: $(diff "$3" "$2" | head -4 | tr '\n' ' ')"
		return 1
	fi
}
perfetto() { # name trace report
	if "$IOTRAIL" export --format perfetto -o "$TMP/$1.json" "$2" 2> "$TMP/$1.err" &&
	   python3 tests/tools/check_perfetto.py "$TMP/$1.json" "$3" > "$TMP/$1.check"; then
		pass "$1 ($(grep -E 'span|probe|gc|checkpoint' "$TMP/$1.check" | tr '\n' ';'))"
	else
		fail "$1" "$(cat "$TMP/$1.err" "$TMP/$1.check" 2>/dev/null | tail -2)"
	fi
}

# ---- probes
T=tests/data/usdt-demo.trail
R=$TMP/usdt.json
"$IOTRAIL" report --json "$T" > "$R" || { fail export_probes_csv "report --json failed"; exit 1; }
if ! "$IOTRAIL" export --format csv --what probes -o "$TMP/p.csv" "$T" 2> "$TMP/p.err"; then
	fail export_probes_csv "exit $?: $(cat "$TMP/p.err")"
else
	bad=""
	n=$(csv_rows "$TMP/p.csv")
	read -r hits spans avg rmax < <(jq -r '"\([.uprobes.probes[].hits] | add) \([.uprobes.spans[].count] | add) \(.uprobes.spans[0].avg_ns) \(.uprobes.spans[0].max_ns)"' "$R")
	[ "$n" = $((hits + spans)) ] || bad="$bad; $n rows, the report $hits hits + $spans spans"
	[ "$hits" -gt 0 ] && [ "$spans" -gt 0 ] || bad="$bad; the fixture has no hits or no spans"
	# rows per probe (its hits) and per span, as the report counts them
	want=$(jq -r '(.uprobes.probes[] | "\(.label) \(.hits)"), (.uprobes.spans[] | "\(.name) span \(.count)")' "$R" | sort)
	got=$(awk -F, 'NR > 1 { k = $6 == "span" ? $5 " span" : $5; n[k]++ } END { for (k in n) print k, n[k] }' "$TMP/p.csv" | sort)
	[ "$got" = "$want" ] || bad="$bad; rows per probe '$(echo $got)', the report's '$(echo $want)'"
	# the spans' durations: max == max_ns, sum within count/2 of avg_ns * count
	read -r cnt sum max < <(awk -F, 'NR > 1 && $6 == "span" { n++; s += $7; if ($7 > m) m = $7 }
		END { printf "%d %d %d\n", n, s, m }' "$TMP/p.csv")
	d=$((sum - avg * cnt)); d=${d#-}
	[ "$max" = "$rmax" ] && [ $((2 * d)) -le "$cnt" ] \
		|| bad="$bad; spans sum $sum max $max, the report avg $avg x $cnt max $rmax"
	# a hit's arguments: work__done's are (i, len, fd), i counting up from 0
	args=$(awk -F, 'NR > 1 && $5 == "work__done" { printf "%s ", $10 }' "$TMP/p.csv" | cut -d' ' -f1-3)
	[ "$args" = "0 1 2" ] || bad="$bad; work__done's first arg0s are '$args', not 0 1 2"
	if [ -n "$bad" ]; then
		fail export_probes_csv "${bad#; }"
	elif golden export_probes_csv "$TMP/p.csv" tests/data/golden/usdt-demo.csv-probes.out; then
		pass "export_probes_csv ($n rows: $hits hits == the report's per probe, $spans spans, durations sum $sum ns, max $max ns == the report's; == golden)"
	fi
fi
perfetto export_probes_perfetto "$T" "$R"

# ---- F2FS
T=tests/data/f2fs-gc.trail
R=$TMP/f2fs.json
"$IOTRAIL" report --json "$T" > "$R" || { fail export_fs_csv "report --json failed"; exit 1; }
if ! "$IOTRAIL" export --format csv --what fs -o "$TMP/f.csv" "$T" 2> "$TMP/f.err"; then
	fail export_fs_csv "exit $?: $(cat "$TMP/f.err")"
else
	bad=""
	n=$(csv_rows "$TMP/f.csv")
	# rows per kind, as the report counts them (a kind it has none of: no row)
	want=$(jq -r '"gc \(.f2fs.gc_rounds | length)", "gc_move \([.f2fs.gc_rounds[].moved | length] | add // 0)",
		"checkpoint \(.f2fs.checkpoints | length)", "background_gc \(.f2fs.background_gc_wakeups)"' "$R" |
		grep -v ' 0$' | sort)
	got=$(awk -F, 'NR > 1 { n[$2]++ } END { for (k in n) print k, n[k] }' "$TMP/f.csv" | sort)
	[ "$got" = "$want" ] || bad="$bad; rows per kind '$(echo $got)', the report's '$(echo $want)'"
	# durations, as the report's (ns, in order)
	want=$(jq -r '[.f2fs.gc_rounds[], .f2fs.checkpoints[] | .duration_ns] | sort | join(" ")' "$R")
	durs=$(awk -F, 'NR > 1 && ($2 == "gc" || $2 == "checkpoint") { print $6 }' "$TMP/f.csv" | sort -n | tr '\n' ' ')
	durs=${durs% }
	[ "$durs" = "$want" ] || bad="$bad; durations '$durs', the report's '$want'"
	# what moved: file, bytes, zones as the report's
	want=$(jq -r '.f2fs.gc_rounds[].moved[] | "\(.path) \(.bytes) \(.from_zone) \(.to_zone)"' "$R" | sort)
	moves=$(awk -F, 'NR > 1 && $2 == "gc_move" { print $18, $19, $20, $21 }' "$TMP/f.csv" | sort)
	[ "$moves" = "$want" ] && [ -n "$want" ] || bad="$bad; moved '$moves', the report's '$want'"
	if [ -n "$bad" ]; then
		fail export_fs_csv "${bad#; }"
	elif golden export_fs_csv "$TMP/f.csv" tests/data/golden/f2fs-gc.csv-fs.out; then
		pass "export_fs_csv ($n rows: rounds, files moved ($(echo "$moves" | tr '\n' ';')), checkpoints, durations ($durs ns) == the report's; == golden)"
	fi
fi
perfetto export_fs_perfetto "$T" "$R"

# ---- nothing to export: a note, exit 0, the header alone
"$IOTRAIL" export --format csv --what probes -o "$TMP/none.csv" tests/data/f2fs-gc.trail 2> "$TMP/none.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l < "$TMP/none.csv")" = 1 ] && grep -q "has no user-space probe hits" "$TMP/none.err"; then
	pass "export_probes_none (a trace without probes: the header, a note, exit 0)"
else
	fail export_probes_none "exit $rc, $(wc -l < "$TMP/none.csv") lines, $(cat "$TMP/none.err")"
fi
