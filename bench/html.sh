#!/usr/bin/env bash
# The HTML report's time and size on a large trace (issue 15: a 10M-I/O
# trace in under 10 s and under 5 MB): a synthetic trace of N I/Os written
# through the trace writer (build/bench/analyzer -g: two disks at QD 32
# and 8, reads and writes), then `iotrail report --html` on it, with its
# time, peak RSS (/usr/bin/time) and the page's size.
#   bench/html.sh [IOS...]      (default: 10000000)
# The traces go under $TMPDIR (else /tmp): about 48 bytes an I/O, removed
# at the end unless KEEP=1. Run it under `flock -x /work/heavy.lock` on a
# shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
IOTRAIL=${IOTRAIL:-$PWD/build/iotrail}
GEN=${GEN:-$PWD/build/bench/analyzer}
[ -x "$IOTRAIL" ] && [ -x "$GEN" ] || { echo "html: run make first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "html: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
dir=${TMPDIR:-/tmp}
[ $# -gt 0 ] || set -- 10000000
for n in "$@"; do
	trace=${TRACE:-$dir/iotrail-html.$n.trail}
	[ -s "$trace" ] || "$GEN" -g -n "$n" -o "$trace"
	/usr/bin/time -f '%M %e %U' -o "$trace.time" "$IOTRAIL" report --html -o "$trace.html" "$trace"
	read -r peak secs user < "$trace.time"
	# the same pass without drawing, for what the page itself costs
	/usr/bin/time -f '%e' -o "$trace.time" "$IOTRAIL" report "$trace" > /dev/null
	read -r text_secs < "$trace.time"
	printf 'html: %s I/Os, report --html %s s (%s s user; the text report %s s), page %.2f MB, %s charts, peak RSS %.1f MiB\n' \
		"$n" "$secs" "$user" "$text_secs" "$(awk -v s="$(stat -c %s "$trace.html")" 'BEGIN { print s / 1e6 }')" \
		"$(grep -o '<svg id=' "$trace.html" | wc -l)" "$(awk -v k="$peak" 'BEGIN { print k / 1024 }')"
	rm -f "$trace.time" "$trace.html"
	[ "${KEEP:-0}" = 1 ] || [ -n "${TRACE:-}" ] || rm -f "$trace"
done
