#!/usr/bin/env bash
# record --target with two agents, both on this machine over 127.0.0.1,
# each recording its own loop device over tmpfs (--target-dev once per
# target) while the initiator's COMMAND runs one fio job on each. fio's
# per-job total_ios is the ground truth for machines 1 and 2. Then: the
# second agent killed mid-run (its machine incomplete with a NOTE naming
# it, the first machine whole and exact), and a bad second target refused
# with one line naming it before anything records. Then an agent with a
# key per initiator (--key repeated, or a directory): each initiator's
# session logged with the key that authenticated it, a key it lacks
# refused on both ends, the same key under two names refused at start.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

ALL="targets_merged targets_machines_named targets_one_lost targets_bad_second targets_key_count
targets_keys_per_initiator targets_key_unknown targets_key_dir targets_key_twice"
why=$(host_blocker)
if [ -n "$why" ]; then
	for t in $ALL; do skip "$t" "$why"; done
	exit 0
fi

LOOP2DEV="" LOOP2IMG="" AGENTS=""
stop_all() {
	local a
	for a in $AGENTS; do kill "$a" 2>/dev/null; wait "$a" 2>/dev/null; done
	[ -n "$LOOP2DEV" ] && losetup -d "$LOOP2DEV" 2>/dev/null
	rm -f "$LOOP2IMG"
	cleanup
}
trap stop_all EXIT

# start_agent_n N PORT: agent N on 127.0.0.1:PORT, its pid in AGENT_N, its
# log in $TMP/agentN.log; 1 when it did not come up
start_agent_n() {
	local pid i
	"$IOTRAIL" agent --key "$TMP/agent.key" --listen "127.0.0.1:$2" 2> "$TMP/agent$1.log" &
	pid=$!
	AGENTS="$AGENTS $pid"
	eval "AGENT_$1=$pid"
	for i in $(seq 50); do
		grep -q listening "$TMP/agent$1.log" 2>/dev/null && return 0
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

"$IOTRAIL" agent --new-key "$TMP/agent.key" 2>/dev/null
make_loop 128 none || { fail targets_setup "cannot set up a loop device"; exit 1; }
LOOP2IMG=$(mktemp /dev/shm/iotrail-it.${RUNTAG}XXXXXX)
truncate -s 128M "$LOOP2IMG"
LOOP2DEV=$(losetup -f --show --direct-io=on "$LOOP2IMG") \
	|| { fail targets_setup "cannot set up a second loop device"; exit 1; }
LOOP2NAME=${LOOP2DEV#/dev/}
echo none > "/sys/block/$LOOP2NAME/queue/scheduler"
PORT1=$((20000 + RANDOM % 20000))
PORT2=$((PORT1 + 7))
start_agent_n 1 $PORT1 && start_agent_n 2 $PORT2 \
	|| { fail targets_setup "an agent did not start: $(cat "$TMP"/agent?.log | head -2 | tr '\n' ' ')"; exit 1; }

TARGETS=(--target "127.0.0.1:$PORT1,127.0.0.1:$PORT2" --key "$TMP/agent.key"
	--target-layers block --target-dev "$LOOPNAME" --target-dev "$LOOP2NAME")
# fio: job a on the first device, b on the second (global options first)
FIO=(fio --output-format=json --bs=4k --direct=1 --ioengine=psync --rw=randread --size=64M)
JOBS=(--name=a --filename="$LOOPDEV" --name=b --filename="$LOOP2DEV")
# reads MACHINE DEV TRACE: reads the report of MACHINE counts on DEV
reads() {
	"$IOTRAIL" report --machine "$1" --json "$3" 2>/dev/null \
		| jq "[.groups[] | select(.key.op == \"read\" and .key.dev == \"$2\") | .count] | add // 0"
}

# ---- two targets, each its own device, both whole (--dev as a list) ----
"$IOTRAIL" record -o "$TMP/m.trail" --layers block --dev "$LOOPNAME,$LOOP2NAME" \
	"${TARGETS[@]}" -- "${FIO[@]}" --output="$TMP/fio.json" --number_ios=3000 "${JOBS[@]}" \
	2> "$TMP/m.err"; rc=$?
wa=$(jq '.jobs[] | select(.jobname == "a") | .read.total_ios' "$TMP/fio.json" 2>/dev/null)
wb=$(jq '.jobs[] | select(.jobname == "b") | .read.total_ios' "$TMP/fio.json" 2>/dev/null)
g1=$(reads 1 "$LOOPNAME" "$TMP/m.trail")
g2=$(reads 2 "$LOOP2NAME" "$TMP/m.trail")
x1=$(reads 1 "$LOOP2NAME" "$TMP/m.trail")
x2=$(reads 2 "$LOOPNAME" "$TMP/m.trail")
left=$(ls "$TMP"/m.trail.* 2>/dev/null | tr '\n' ' ')
if [ $rc -eq 0 ] && [ -n "$wa" ] && [ "$wa" -gt 0 ] && [ "$g1" = "$wa" ] \
	&& [ -n "$wb" ] && [ "$wb" -gt 0 ] && [ "$g2" = "$wb" ] && [ "$x1" = 0 ] && [ "$x2" = 0 ] \
	&& [ -z "$left" ]; then
	pass "targets_merged (machine 1 read $g1 on $LOOPNAME, fio $wa; machine 2 read $g2 on $LOOP2NAME, fio $wb; neither recorded the other's device; no spool left)"
else
	fail targets_merged "rc=$rc machine 1 $g1/$wa (other dev $x1), machine 2 $g2/$wb (other dev $x2), left: $left: $(tail -2 "$TMP/m.err" | tr '\n' '|')"
fi

# the summary names each target with its machine; the report lists three
# machines, each target with its own clock line
s1=$(grep -c "target 127.0.0.1:$PORT1: .* events in .* (machine 1)" "$TMP/m.err")
s2=$(grep -c "target 127.0.0.1:$PORT2: .* events in .* (machine 2)" "$TMP/m.err")
"$IOTRAIL" report "$TMP/m.trail" > "$TMP/m.txt" 2>&1
ms=$(grep -c -E '^  [012] +(initiator|target) ' "$TMP/m.txt")
clocks=$(grep -c 'clock: its time' "$TMP/m.txt")
jm=$(jq_report "$TMP/m.trail" '.machines | length')
if [ "$s1" = 1 ] && [ "$s2" = 1 ] && [ "$ms" = 3 ] && [ "$clocks" = 2 ] && [ "$jm" = 3 ]; then
	pass "targets_machines_named (stderr names both targets and their machines; report: 3 machines, 2 clocks)"
else
	fail targets_machines_named "summary lines $s1 $s2, report machines $ms clocks $clocks json machines $jm"
fi

# ---- the second agent's session killed mid-run ----
kill_recorder_when "$TMP/k.trail.target2" $AGENT_2
"$IOTRAIL" record -o "$TMP/k.trail" --layers block --dev "$LOOPNAME" --dev "$LOOP2NAME" \
	"${TARGETS[@]}" -- "${FIO[@]}" --output="$TMP/kfio.json" --time_based --runtime=5 "${JOBS[@]}" \
	2> "$TMP/k.err"; rc=$?
wait $KILLER
wa=$(jq '.jobs[] | select(.jobname == "a") | .read.total_ios' "$TMP/kfio.json" 2>/dev/null)
g1=$(reads 1 "$LOOPNAME" "$TMP/k.trail")
g2=$(reads 2 "$LOOP2NAME" "$TMP/k.trail")
"$IOTRAIL" report "$TMP/k.trail" > "$TMP/k.txt" 2>&1
warn2=$(grep -c "WARNING: machine 2's data is incomplete.*127.0.0.1:$PORT2" "$TMP/k.txt")
warn1=$(grep -c "WARNING: machine 1's data is incomplete" "$TMP/k.txt")
jinc=$(jq_report "$TMP/k.trail" '[.machines[] | (.incomplete // "") | length > 0] | map(if . then 1 else 0 end) | join("")' 2>/dev/null)
if [ $rc -eq 0 ] && [ -n "$wa" ] && [ "$g1" = "$wa" ] && [ "${g2:-0}" -gt 0 ] && [ "$warn2" = 1 ] \
	&& [ "$warn1" = 0 ] && [ "$jinc" = 001 ] \
	&& grep -q "warning: agent 127.0.0.1:$PORT2 lost" "$TMP/k.err" \
	&& ! grep -q "warning: agent 127.0.0.1:$PORT1" "$TMP/k.err"; then
	pass "targets_one_lost (machine 1 whole: $g1 reads, fio $wa; machine 2 up to its last pull: $g2 reads, incomplete with its NOTE)"
else
	fail targets_one_lost "rc=$rc machine 1 $g1/$wa machine 2 $g2 warnings m2=$warn2 m1=$warn1 json=$jinc: $(grep -m2 -E 'warning|failed' "$TMP/k.err" | tr '\n' '|')"
fi

# ---- a second target nothing listens on: one line naming it, nothing
# recorded, on this machine or on the first target ----
FREE=$((PORT2 + 1))
before=$(grep -c "recording (hooks" "$TMP/agent1.log")
"$IOTRAIL" record -o "$TMP/u.trail" --layers block --target "127.0.0.1:$PORT1,127.0.0.1:$FREE" \
	--key "$TMP/agent.key" -- true 2> "$TMP/u.err"; rc=$?
sleep 0.3
after=$(grep -c "recording (hooks" "$TMP/agent1.log")
n=$(grep -c . "$TMP/u.err")
if [ $rc -ne 0 ] && [ "$n" = 1 ] && grep -q "127.0.0.1:$FREE.*iotrail agent" "$TMP/u.err" \
	&& [ "$before" = "$after" ] && [ -z "$(ls "$TMP"/u.trail* 2>/dev/null)" ]; then
	pass "targets_bad_second (one line: $(cut -c1-90 "$TMP/u.err")...; the first target never started recording)"
else
	fail targets_bad_second "exit $rc, $n lines: $(head -3 "$TMP/u.err" | tr '\n' '|'); first agent recordings $before -> $after; files: $(ls "$TMP"/u.trail* 2>/dev/null)"
fi

# ---- --key: one for all or one per target ----
"$IOTRAIL" record -o "$TMP/c.trail" --layers block --target "127.0.0.1:$PORT1,127.0.0.1:$PORT2" \
	--key "$TMP/agent.key,$TMP/agent.key,$TMP/agent.key" -- true 2> "$TMP/c.err"; rc=$?
n=$(grep -c . "$TMP/c.err")
if [ $rc -ne 0 ] && [ "$n" = 1 ] && grep -q "3 key files for 2 targets" "$TMP/c.err" \
	&& [ ! -e "$TMP/c.trail" ]; then
	pass "targets_key_count (3 keys for 2 targets refused in one line)"
else
	fail targets_key_count "exit $rc, $n lines: $(head -2 "$TMP/c.err" | tr '\n' '|')"
fi

# ---- an agent with a key per initiator ----
mkdir -m 700 "$TMP/keys"
for k in alpha beta; do "$IOTRAIL" agent --new-key "$TMP/keys/$k.key" 2>/dev/null; done
"$IOTRAIL" agent --new-key "$TMP/stranger.key" 2>/dev/null
PORT3=$((PORT2 + 3))
"$IOTRAIL" agent --key "$TMP/keys/alpha.key" --key "$TMP/keys/beta.key" \
	--listen "127.0.0.1:$PORT3" 2> "$TMP/agent3.log" &
AGENTS="$AGENTS $!"
for i in $(seq 50); do grep -q listening "$TMP/agent3.log" && break; sleep 0.1; done
ok=1
for k in alpha beta; do
	"$IOTRAIL" record -o "$TMP/$k.trail" --layers block --target "127.0.0.1:$PORT3" \
		--key "$TMP/keys/$k.key" --target-layers block --target-dev "$LOOPNAME" -- \
		dd if="$LOOPDEV" of=/dev/null bs=4k count=100 iflag=direct 2> "$TMP/$k.err" || ok=0
done
sleep 0.3
na=$(grep -c "connected (initiator .*, key $TMP/keys/alpha.key)" "$TMP/agent3.log")
nb=$(grep -c "connected (initiator .*, key $TMP/keys/beta.key)" "$TMP/agent3.log")
ra=$(reads 1 "$LOOPNAME" "$TMP/alpha.trail")
if [ $ok = 1 ] && [ "$na" = 1 ] && [ "$nb" = 1 ] && [ "$ra" -ge 100 ] \
	&& grep -q "pre-shared keys: 2, one per initiator" "$TMP/agent3.log"; then
	pass "targets_keys_per_initiator (two keys on one agent; each session logged with its key file; machine 1 read $ra)"
else
	fail targets_keys_per_initiator "ok=$ok alpha sessions $na beta $nb reads $ra: $(grep -v '^$' "$TMP"/alpha.err "$TMP"/beta.err | tail -2 | tr '\n' '|') $(tail -2 "$TMP/agent3.log" | tr '\n' '|')"
fi

"$IOTRAIL" record -o "$TMP/s.trail" --layers block --target "127.0.0.1:$PORT3" \
	--key "$TMP/stranger.key" -- true 2> "$TMP/s.err"; rc=$?
sleep 0.3
n=$(grep -c . "$TMP/s.err")
if [ $rc -ne 0 ] && [ "$n" = 1 ] && grep -q "keys differ" "$TMP/s.err" \
	&& grep -q "refused a connection from .*none of this agent's keys" "$TMP/agent3.log" \
	&& [ ! -e "$TMP/s.trail" ]; then
	pass "targets_key_unknown (initiator: $(cut -c1-70 "$TMP/s.err")...; agent: $(grep -o "key id [0-9a-f]*) is none of this agent's keys" "$TMP/agent3.log"))"
else
	fail targets_key_unknown "exit $rc, $n lines: $(head -2 "$TMP/s.err" | tr '\n' '|'); agent: $(tail -1 "$TMP/agent3.log")"
fi

# a directory of keys: the agent takes each file in it
PORT4=$((PORT3 + 1))
"$IOTRAIL" agent --key "$TMP/keys" --listen "127.0.0.1:$PORT4" 2> "$TMP/agent4.log" &
AGENTS="$AGENTS $!"
for i in $(seq 50); do grep -q listening "$TMP/agent4.log" && break; sleep 0.1; done
"$IOTRAIL" record -o "$TMP/d.trail" --layers block --target "127.0.0.1:$PORT4" \
	--key "$TMP/keys/beta.key" --target-layers block --target-dev "$LOOPNAME" -- true 2> "$TMP/d.err"; rc=$?
sleep 0.3
if [ $rc -eq 0 ] && grep -q "pre-shared keys: 2" "$TMP/agent4.log" \
	&& grep -q "connected (initiator .*, key $TMP/keys/beta.key)" "$TMP/agent4.log"; then
	pass "targets_key_dir (--key DIR: 2 keys; the beta initiator's session logged with beta.key)"
else
	fail targets_key_dir "exit $rc: $(head -2 "$TMP/d.err" | tr '\n' '|'); agent: $(head -3 "$TMP/agent4.log" | tr '\n' '|')"
fi

cp "$TMP/keys/alpha.key" "$TMP/alpha-copy.key"
"$IOTRAIL" agent --key "$TMP/keys/alpha.key" --key "$TMP/alpha-copy.key" \
	--listen "127.0.0.1:$((PORT4 + 1))" 2> "$TMP/twice.err"; rc=$?
n=$(grep -c . "$TMP/twice.err")
if [ $rc -ne 0 ] && [ "$n" = 1 ] && grep -q "hold the same key" "$TMP/twice.err"; then
	pass "targets_key_twice (the same key under two names refused at start in one line)"
else
	fail targets_key_twice "exit $rc, $n lines: $(head -2 "$TMP/twice.err" | tr '\n' '|')"
fi
exit 0
