#!/usr/bin/env bash
# `iotrail probe --usdt BINARY` against readelf -n (binutils' own reading
# of the .note.stapsdt notes): provider, name, address, semaphore and
# argument string of every probe, for build/tests/usdt_demo (three probes
# built in with sys/sdt.h) and for Debian's PostgreSQL server when it is
# installed (built with its DTrace probes, semaphores included); the JSON
# view the same; a binary without probes, a file that is not ELF and a
# missing file: one line on stderr, exit 1. Needs no root: nothing loads.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

DEMO=$PWD/build/tests/usdt_demo
PG=$(ls /usr/lib/postgresql/*/bin/postgres 2>/dev/null | tail -1)

# "provider name address semaphore args" per probe, sorted
readelf_view() {
	readelf -n "$1" | awk '
		function hex(h,  i, v) { # mawk has no strtonum
			h = tolower(substr(h, 3)); v = 0
			for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v }
		/Provider:/ { p = $2 }
		/Name:/ { n = $2 }
		/Location:/ { gsub(/,/, ""); a = $2; s = $6 }
		/Arguments:/ { sub(/^ *Arguments: */, ""); printf "%s %s %.0f %.0f %s\n", p, n, hex(a), hex(s), $0 }' \
		| sed -e 's/ *$//' | sort
}
ours_view() {
	"$IOTRAIL" probe --usdt "$1" --json \
		| jq -r '.probes[] | "\(.provider) \(.name) \(.address) \(.semaphore) \(.args)"' \
		| sed -e 's/ *$//' | sort
}
text_count() { "$IOTRAIL" probe --usdt "$1" | sed -n 's/^.*: \([0-9]*\) USDT probes$/\1/p'; }

compare() { # name binary
	local want got
	want=$(readelf_view "$2")
	got=$(ours_view "$2")
	if [ -z "$want" ]; then
		fail "$1" "readelf -n lists no probe in $2"
	elif [ "$got" != "$want" ]; then
		fail "$1" "differs from readelf -n: $(diff <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
	elif [ "$(text_count "$2")" != "$(echo "$want" | wc -l)" ]; then
		fail "$1" "the text view counts $(text_count "$2") probes, readelf $(echo "$want" | wc -l)"
	else
		pass "$1 ($(echo "$want" | wc -l) probes of $(basename "$2") equal readelf -n's)"
	fi
}

why=""
[ -x "$IOTRAIL" ] || why="$IOTRAIL is not built (run make)"
command -v readelf > /dev/null || why=${why:-"readelf is not installed (binutils)"}
command -v jq > /dev/null || why=${why:-"jq is not installed (scripts/install-deps.sh)"}
if [ -n "$why" ]; then
	for t in usdt_list_demo usdt_list_postgres usdt_bad_input; do skip $t "$why"; done
	exit 0
fi
[ -x "$DEMO" ] && compare usdt_list_demo "$DEMO" \
	|| skip usdt_list_demo "$DEMO is not built (make; needs systemtap-sdt-dev's sys/sdt.h)"
[ -n "$PG" ] && compare usdt_list_postgres "$PG" \
	|| skip usdt_list_postgres "no PostgreSQL server installed (scripts/install-deps.sh: postgresql-15)"

bad() { # expect-pattern args...
	local pat=$1 err=$TMP/usdt.err rc
	shift
	"$IOTRAIL" probe --usdt "$@" > /dev/null 2> "$err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l < "$err")" -eq 1 ] && grep -q "$pat" "$err" \
		|| { echo "$* exit $rc: $(cat "$err")"; return 1; }
}
msg=$(bad "no .note.stapsdt section" "$IOTRAIL" && bad "not an ELF file" README.md \
	&& bad "failed to read" "$TMP/missing")
[ -z "$msg" ] && pass "usdt_bad_input (no probes, not ELF, missing: one line, exit 1)" \
	|| fail usdt_bad_input "$msg"
exit ${FAILED:-0}
