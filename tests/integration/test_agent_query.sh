#!/usr/bin/env bash
# iotrail query against an agent on 127.0.0.1 that records the block layer
# of a loop device over tmpfs for an initiator's session (record --target),
# while fio reads known numbers of I/Os: LOAD's count over a window that
# covers the whole run must equal fio's total_ios and the kernel's
# diskstats; after RESET, 0 since reset until new I/O, then exactly the new
# run's I/Os; STORE of a window is honoured, STORE of a predicate refused
# with one line; the session's own file is not disturbed by the queries.
# Then a query with no session running (the agent records for it), and the
# faults: a bad instruction, an old protocol, a wrong key, no agent.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

ALL="query_bad_instruction query_load_fio query_reset query_store query_store_unsupported
query_unknown_device query_session_undisturbed query_without_session query_old_protocol query_wrong_key
query_unreachable"
why=$(host_blocker)
if [ -n "$why" ]; then
	for t in $ALL; do skip "$t" "$why"; done
	exit 0
fi

# exit status $2, one line on stderr, matching $4
one_line() { # name rc errfile pattern want_rc
	local n
	n=$(grep -c . "$3")
	if [ "$2" -eq "$5" ] && [ "$n" -eq 1 ] && grep -q "$4" "$3"; then
		return 0
	fi
	fail "$1" "exit $2 (want $5), $n lines: $(head -3 "$3" | tr '\n' '|')"
	return 1
}

"$IOTRAIL" agent --new-key "$TMP/agent.key" 2>/dev/null
"$IOTRAIL" agent --new-key "$TMP/other.key" 2>/dev/null
PORT=$((20000 + RANDOM % 20000))
QUERY=("$IOTRAIL" query --target "127.0.0.1:$PORT" --key "$TMP/agent.key")

# parsed before anything is sent: no agent needed to refuse a typo
"${QUERY[@]}" 'load block.q2c p99' 'load block.nope count' > "$TMP/bad.out" 2> "$TMP/bad.err"; rc=$?
one_line query_bad_instruction $rc "$TMP/bad.err" "instruction 'load block.nope count': unknown switch" 2 \
	&& [ ! -s "$TMP/bad.out" ] && pass "query_bad_instruction (exit 2, one line, nothing sent)"

"${QUERY[@]}" 'load block.q2c' > /dev/null 2> "$TMP/u.err"; rc=$?
one_line query_unreachable $rc "$TMP/u.err" "cannot connect.*iotrail agent" 1 && pass query_unreachable

make_loop 128 none || { fail query_setup "cannot set up a loop device"; exit 1; }
start_agent "$TMP/agent.key" "$PORT" || { fail query_setup "$AGENT_WHY"; exit 1; }

reads() { awk '{ print $1 }' "/sys/block/$LOOPNAME/stat"; }
fio_reads() { # OUT NIOS: fixed-count 4K random reads, one at a time
	fio --name=q --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--number_ios="$2" --size=120M --output-format=json --output="$1" > /dev/null \
		&& jq '.jobs[0].read.total_ios' "$1"
}
# LOAD in JSON: load SWITCH-AND-PARAMS JQ-FILTER
load() {
	"${QUERY[@]}" --json "load $1" 2>> "$TMP/q.err" | jq -r ".answers[0] | $2"
}

# ---- an initiator's session records the loop device on the "target" ----
# Its command waits for the stop file, so the queries run inside the session.
session() {
	rm -f "$TMP/stop"
	"$IOTRAIL" record -o "$TMP/m.trail" --layers block --dev "$LOOPNAME" \
		--target "127.0.0.1:$PORT" --key "$TMP/agent.key" --target-layers block \
		--target-dev "$LOOPNAME" -- \
		sh -c "while [ ! -e '$TMP/stop' ]; do sleep 0.1; done" 2> "$TMP/m.err" &
	SESSION=$!
	for i in $(seq 100); do grep -q "recording, hooks" "$TMP/m.err" && break; sleep 0.1; done
}
end_session() {
	touch "$TMP/stop"
	wait "$SESSION"
}

# A run: N1 reads, LOAD; RESET, LOAD; N2 reads, LOAD. Fills the globals the
# checks below read. The window of 60 s covers the whole session (it starts
# with the recording, which the answer's start says).
run() {
	: > "$TMP/q.err"
	session
	d0=$(reads)
	fio1=$(fio_reads "$TMP/fio1.json" 1000)
	disk1=$(( $(reads) - d0 ))
	sleep 1 # the spool's flush (0.25 s) and the window's lag (0.5 s)
	"${QUERY[@]}" --json 'load block.q2c window=60s op=read' 'load block.d2c count window=60s' \
		> "$TMP/l1.json" 2>> "$TMP/q.err"
	got1=$(jq '.answers[0].window.count' "$TMP/l1.json")
	ios1=$(jq '.answers[0].window.ios' "$TMP/l1.json")
	d2c1=$(jq '.answers[1].window.count' "$TMP/l1.json")
	"${QUERY[@]}" --json 'reset block.q2c' 'load block.q2c window=60s' > "$TMP/r.json" 2>> "$TMP/q.err"
	after_reset=$(jq '.answers[1].since_reset.count' "$TMP/r.json")
	sleep 1
	idle=$(load "block.q2c" ".since_reset.count")
	fio2=$(fio_reads "$TMP/fio2.json" 300)
	sleep 1
	"${QUERY[@]}" --json 'load block.q2c window=60s' > "$TMP/l2.json" 2>> "$TMP/q.err"
	since2=$(jq '.answers[0].since_reset.count' "$TMP/l2.json")
	total2=$(jq '.answers[0].window.count' "$TMP/l2.json")
}
run
# The block layer misses a completion event in about 1 of 20000 I/Os on
# some machines (lib.sh, explained_loss): the session's own file tells; then
# once more, and the counts must be exact.
if [ "$got1" != "$fio1" ] || [ "$total2" != "$((fio1 + fio2))" ]; then
	end_session
	"$IOTRAIL" report --machine 1 --json "$TMP/m.trail" > "$TMP/m1.json" 2>/dev/null
	if explained_loss "$TMP/m1.json" "$((fio1 + fio2))" "$total2"; then
		echo "# a completion event lost (explained by the trace); once more"
		run
	fi
fi

if [ -n "$fio1" ] && [ "$fio1" -gt 0 ] && [ "$got1" = "$fio1" ] && [ "$ios1" = "$fio1" ] \
	&& [ "$disk1" = "$fio1" ] && [ "$d2c1" = "$fio1" ]; then
	pass "query_load_fio (window count $got1 == fio total_ios $fio1 == diskstats reads $disk1)"
else
	fail query_load_fio "load count=$got1 ios=$ios1 d2c=$d2c1 fio=$fio1 diskstats=$disk1: $(head -2 "$TMP/q.err" | tr '\n' '|')"
fi

if [ "$after_reset" = 0 ] && [ "$idle" = 0 ] && [ -n "$fio2" ] && [ "$since2" = "$fio2" ] \
	&& [ "$total2" = "$((fio1 + fio2))" ]; then
	pass "query_reset (0 since reset, 0 a second later, then $since2 == fio's $fio2; window $total2)"
else
	fail query_reset "after reset=$after_reset idle=$idle since=$since2 fio2=$fio2 window=$total2 (want $((fio1 + fio2)))"
fi

# STORE a window: the next load spans exactly that; then back to 1 s
"${QUERY[@]}" --json 'store block.q2c window=2s' 'load block.q2c' 'store all window=1s' \
	> "$TMP/s.json" 2>> "$TMP/q.err"; rc=$?
span=$(jq '.answers[1].window | .end_ns - .start_ns' "$TMP/s.json" 2>/dev/null)
val=$(jq -r '.answers[0].value' "$TMP/s.json" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$span" = 2000000000 ] && [ "$val" = 2s ]; then
	pass "query_store (window=2s: the load spans $span ns)"
else
	fail query_store "rc=$rc span=$span value=$val"
fi

"${QUERY[@]}" 'store all predicate=dev==sda' > "$TMP/p.out" 2> "$TMP/p.err"; rc=$?
if one_line query_store_unsupported $rc "$TMP/p.err" "predicate' is not supported by this agent yet" 1; then
	if grep -q "refused store all predicate" "$TMP/agent.log" && [ ! -s "$TMP/p.out" ]; then
		pass "query_store_unsupported (one line, exit 1; the agent logs the refusal)"
	else
		fail query_store_unsupported "agent log: $(tail -1 "$TMP/agent.log")"
	fi
fi

# a device the recording does not have: one line, and the connection
# goes on (the instruction after it is not sent: the first failure ends)
"${QUERY[@]}" 'load block.q2c dev=nosuchdisk' 'reset all' > "$TMP/d.out" 2> "$TMP/d.err"; rc=$?
if one_line query_unknown_device $rc "$TMP/d.err" "no device 'nosuchdisk' in the agent's recording (it records: $LOOPNAME)" 1; then
	if ! grep -q "reset all" "$TMP/agent.log" && [ ! -s "$TMP/d.out" ]; then
		pass "query_unknown_device (one line naming what the agent records; nothing after it sent)"
	else
		fail query_unknown_device "the reset after it was sent, or output: $(head -1 "$TMP/d.out")"
	fi
fi

# the session went on beside the queries: its file has the target's reads
end_session; rc=$?
m1=$("$IOTRAIL" report --machine 1 --json "$TMP/m.trail" 2>/dev/null \
	| jq "[.groups[] | select(.key.op == \"read\") | .count] | add")
if [ $rc -eq 0 ] && [ "$m1" = "$((fio1 + fio2))" ] && ! grep -q "refused:" "$TMP/agent.log"; then
	pass "query_session_undisturbed (the session's file: $m1 reads on machine 1, none refused)"
else
	fail query_session_undisturbed "exit $rc, machine 1 reads $m1 (want $((fio1 + fio2))): $(grep -m1 -E 'refused|failed' "$TMP/agent.log")"
fi

# ---- no session: the agent records for the query, and stops after ----
# fio reads at a fixed rate meanwhile: the query's own recording waits out
# its first window, whose rate must be fio's (within 15%), and whose count
# cannot exceed what the kernel completed on the device during the query.
sleep 0.3
fio --name=rate --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--rate_iops=400 --size=120M --time_based --runtime=9 --output-format=json \
	--output="$TMP/rate.json" > /dev/null &
FIO=$!
sleep 1
d0=$(reads)
"${QUERY[@]}" --json "load block.q2c window=2s dev=$LOOPNAME" > "$TMP/n.json" 2> "$TMP/n.err"; rc=$?
disk=$(( $(reads) - d0 ))
wait $FIO
count=$(jq '.answers[0].window.count' "$TMP/n.json" 2>/dev/null)
span=$(jq '.answers[0].window | .end_ns - .start_ns' "$TMP/n.json" 2>/dev/null)
iops=$(jq '.answers[0].window.iops' "$TMP/n.json" 2>/dev/null)
fiops=$(jq '.jobs[0].read.iops' "$TMP/rate.json" 2>/dev/null)
off=$(rel_diff "${iops:-0}" "${fiops:-1}")
sleep 0.5
left=$(pgrep -f "record -o .*/iotrail-agent\.[^/]*/query-" | head -1)
files=$(ls "${TMPDIR:-/tmp}"/iotrail-agent.*/query-* 2>/dev/null | head -1)
if [ $rc -eq 0 ] && [ "$span" = 2000000000 ] && [ "${count:-0}" -gt 0 ] \
	&& [ "$count" -le "$disk" ] && awk -v o="$off" 'BEGIN { exit !(o <= 0.15) }' \
	&& grep -q "recording for queries" "$TMP/agent.log" && [ -z "$left" ] && [ -z "$files" ]; then
	pass "query_without_session (its own recording: $count I/Os in 2 s, $iops IOPS vs fio's $fiops; stopped and removed after)"
else
	fail query_without_session "rc=$rc span=$span count=$count diskstats=$disk iops=$iops fio=$fiops recorder left '$left' files '$files': $(head -1 "$TMP/n.err")"
fi

# ---- faults ----
IOTRAIL_AGENT_PROTOCOL=1 "${QUERY[@]}" 'load block.q2c' > /dev/null 2> "$TMP/v.err"; rc=$?
one_line query_old_protocol $rc "$TMP/v.err" "unsupported protocol version 1 (this agent speaks version 2)" 1 \
	&& pass "query_old_protocol (a version-1 peer gets the version line)"

"$IOTRAIL" query --target "127.0.0.1:$PORT" --key "$TMP/other.key" 'load block.q2c' \
	> /dev/null 2> "$TMP/w.err"; rc=$?
one_line query_wrong_key $rc "$TMP/w.err" "keys differ" 1 && pass query_wrong_key
exit 0
