#!/usr/bin/env bash
# The online mode against ground truth: fio's total_ios of a randrw job with
# number_ios on a loop device.
#   online_top_json     iotrail top --json, stopped by SIGINT after fio: the
#                       I/Os of every interval's line (the last one partial)
#                       add up to fio's reads and writes exactly, and so do
#                       the Q2C and D2C histogram counts, with no miss
#   online_serve_http   iotrail serve answers /metrics, 404, 400 for a bad
#                       request line, and keeps serving
#   online_prometheus   a real Prometheus (Debian's package) scrapes serve
#                       every second; its stored Q2C _count and ios_total at
#                       the end equal fio's total_ios
# Merges are turned off on the device (nomerges=2): fio's I/Os are then the
# device's requests one for one.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NIOS=3000

# bad options: one line each, naming the option, exit 2 (before any probe)
bad=""
for args in "top --bogus" "top --interval -1" "top --count x" "serve --listen nonsense" \
	    "serve --listen 127.0.0.1:0" "serve extra"; do
	"$IOTRAIL" $args > /dev/null 2> "$TMP/bad.err"; rc=$?
	lines=$(wc -l < "$TMP/bad.err")
	[ $rc -eq 2 ] && [ "$lines" -eq 1 ] || bad="$bad; '$args': exit $rc, $lines lines"
done
if [ -z "$bad" ]; then
	pass "online_bad_input (6 bad options of top and serve: one line each, exit 2)"
else
	fail online_bad_input "${bad#; }"
fi

why=$(host_blocker)
if [ -n "$why" ]; then
	for t in online_top_json online_top_json_own_issue online_serve_http online_prometheus; do skip "$t" "$why"; done
	exit 0
fi
make_loop 128 none || { fail online_top_json "cannot set up a loop device"; exit 1; }
echo 2 > "/sys/block/$LOOPNAME/queue/nomerges"

fio_rw() { # OUT: fio's randrw job, NIOS I/Os
	fio --name=online --filename="$LOOPDEV" --rw=randrw --bs=4k --direct=1 \
		--ioengine=io_uring --iodepth=8 --number_ios=$NIOS --size=120M \
		--output-format=json --output="$1" > /dev/null
}
fio_total() { jq -r ".jobs[0].$2.total_ios" "$1"; }

# wait_for N CMD...: up to N tenths of a second for CMD to succeed
wait_for() {
	local n=$1 i; shift
	for i in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}

# ---- top --json ----
# check_top NAME [VAR=VALUE...]: top --json (in that environment) beside fio
check_top() {
	local name=$1 rc sums want reads writes; shift
	env "$@" "$IOTRAIL" top --json --interval 0.5 --dev "$LOOPDEV" > "$TMP/top.json" 2> "$TMP/top.err" &
	TOP=$!
	if ! wait_for 100 test -s "$TMP/top.json"; then
		fail "$name" "no line from top in 10 s: $(head -1 "$TMP/top.err")"
		kill $TOP 2>/dev/null
		return
	fi
	fio_rw "$TMP/fio-top.json"
	kill -INT $TOP
	wait $TOP; rc=$?
	reads=$(fio_total "$TMP/fio-top.json" read) writes=$(fio_total "$TMP/fio-top.json" write)
	sums=$(jq -s -r '[ ([.[].groups[] | select(.op == "read") | .ios] | add),
			   ([.[].groups[] | select(.op == "write") | .ios] | add),
			   ([.[].groups[].q2c.count] | add), ([.[].groups[].d2c.count] | add),
			   ([.[].missed[]] | add), length ] | map(. // 0 | tostring) | join(" ")' "$TMP/top.json")
	set -- $sums
	want="$reads $writes $((reads + writes)) $((reads + writes)) 0"
	if [ $rc -ne 0 ]; then
		fail "$name" "top exited $rc: $(head -1 "$TMP/top.err")"
	elif [ "$1 $2 $3 $4 $5" != "$want" ] || [ "$6" -lt 2 ]; then
		fail "$name" "reads writes q2c d2c missed over $6 intervals: $1 $2 $3 $4 $5, fio: $want"
	else
		pass "$name"
		echo "  $6 intervals: $1 reads, $2 writes (fio: $reads, $writes), Q2C and D2C counts $3 $4, 0 missed"
	fi
}
check_top online_top_json
# the probes' own issue times (the `issued` map), as where the queue keeps
# no block stats or the kernel's BTF lacks the flags' enumerators
check_top online_top_json_own_issue IOTRAIL_ONLINE_OWN_ISSUE_TIME=1

# ---- serve ----
SERVE="" PROM=""
stop_all() { kill $PROM $SERVE 2>/dev/null; wait $PROM $SERVE 2>/dev/null; cleanup; }
trap stop_all EXIT
for try in 1 2 3; do
	PORT=$((20000 + RANDOM % 20000))
	"$IOTRAIL" serve --listen 127.0.0.1:$PORT --dev "$LOOPDEV" 2> "$TMP/serve.err" &
	SERVE=$!
	wait_for 100 grep -q "metrics" "$TMP/serve.err" && break
	wait $SERVE 2>/dev/null; SERVE=""
done
if [ -z "$SERVE" ]; then
	fail online_serve_http "serve did not start: $(head -1 "$TMP/serve.err")"
	skip online_prometheus "serve did not start"
	exit 1
fi
URL=http://127.0.0.1:$PORT
bad=$( { exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'NOT A REQUEST\r\n\r\n' >&3 && head -c 12 <&3; } 2>&1)
code404=$(curl -s -o /dev/null -w '%{http_code}' "$URL/nothing")
metrics=$(curl -s -D "$TMP/headers" "$URL/metrics")
if [ "$bad" != "HTTP/1.1 400" ] || [ "$code404" != 404 ] ||
   ! grep -q '^iotrail_block_missed_total{reason="no_issue"} 0$' <<< "$metrics" ||
   ! grep -qi '^content-type: text/plain; version=0.0.4' "$TMP/headers"; then
	fail online_serve_http "bad request: '$bad', /nothing: $code404, /metrics: $(head -c 200 <<< "$metrics")"
else
	pass online_serve_http
fi

# ---- Prometheus ----
if ! command -v prometheus > /dev/null; then
	skip online_prometheus "prometheus is not installed (scripts/install-deps.sh)"
	exit 0
fi
PPORT=$((PORT + 1))
cat > "$TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: iotrail
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address=127.0.0.1:$PPORT > "$TMP/prom.log" 2>&1 &
PROM=$!
promq() { # QUERY: the value of a one-element instant vector, or nothing
	curl -s --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty' 2> /dev/null
}
scraped() { [ "$(promq 'up{job="iotrail"}')" = 1 ]; }
if ! wait_for 300 scraped; then
	fail online_prometheus "Prometheus did not scrape serve in 30 s: $(tail -2 "$TMP/prom.log" | tr '\n' ' ')"
	exit 1
fi
fio_rw "$TMP/fio-prom.json"
total=$(( $(fio_total "$TMP/fio-prom.json" read) + $(fio_total "$TMP/fio-prom.json" write) ))
# serve counts since it started: the ~10 requests of the HTTP checks'
# scrapes are none (they are not block I/O); fio's are all of them
q2c='sum(iotrail_block_stage_seconds_count{stage="q2c"})'
done_scraping() { [ "$(promq "$q2c")" = "$total" ]; }
wait_for 50 done_scraping
got=$(promq "$q2c") ios=$(promq 'sum(iotrail_block_ios_total)')
# the recording rule's expression (doc/prometheus.md), over all the run
p99=$(promq 'histogram_quantile(0.99, sum by (le) (iotrail_block_stage_seconds_bucket{stage="d2c"}))')
if [ "$got" = "$total" ] && [ "$ios" = "$total" ] && awk -v p="$p99" 'BEGIN { exit !(p > 0 && p < 10) }'; then
	pass online_prometheus
	echo "  Prometheus: Q2C _count $got, ios_total $ios (fio: $total); D2C p99 $p99 s"
else
	fail online_prometheus "Prometheus' Q2C _count '$got', ios_total '$ios', fio's total_ios $total (p99 '$p99')"
fi
kill -TERM $SERVE; wait $SERVE; rc=$?
[ $rc -eq 0 ] || fail online_prometheus "serve exited $rc on SIGTERM"
SERVE=""
