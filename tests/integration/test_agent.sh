#!/usr/bin/env bash
# iotrail agent and record --target, both on this machine over 127.0.0.1:
# the agent records the block layer of a loop device over tmpfs while the
# initiator's COMMAND runs fio on it. fio's total_ios is the ground truth
# for machine 1's reads; the clock of one machine against itself must come
# out within its own uncertainty of 0. Then every fault: no key, a key
# readable by others, a wrong key, another protocol version, no agent, a
# target that cannot record, the agent killed mid-run.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

ALL="agent_no_key agent_key_mode agent_new_key agent_merged agent_clock agent_machine0_alone
agent_wrong_key agent_version agent_unreachable agent_target_fails agent_busy agent_killed
agent_sigterm"
why=$(host_blocker)
if [ -n "$why" ]; then
	for t in $ALL; do skip "$t" "$why"; done
	exit 0
fi

# one line on stderr, exit status non-zero, the line naming $2
one_line_fail() { # name rc errfile pattern
	local n
	n=$(grep -c . "$3")
	if [ "$2" -ne 0 ] && [ "$n" -eq 1 ] && grep -q "$4" "$3"; then
		return 0
	fi
	fail "$1" "exit $2, $n lines: $(head -3 "$3" | tr '\n' '|')"
	return 1
}

# ---- the key ----
"$IOTRAIL" agent --key "$TMP/none.key" 2> "$TMP/nokey.err"; rc=$?
one_line_fail agent_no_key $rc "$TMP/nokey.err" "without a key.*new-key" && pass agent_no_key

"$IOTRAIL" agent --new-key "$TMP/agent.key" 2> "$TMP/new.err"; rc=$?
mode=$(stat -c %a "$TMP/agent.key" 2>/dev/null)
hex=$(tr -d '\n' < "$TMP/agent.key" 2>/dev/null | grep -cE '^[0-9a-f]{64}$')
"$IOTRAIL" agent --new-key "$TMP/agent.key" 2> "$TMP/new2.err"; rc2=$?
if [ $rc -eq 0 ] && [ "$mode" = 600 ] && [ "$hex" = 1 ] && [ $rc2 -ne 0 ] \
	&& grep -q "exists" "$TMP/new2.err"; then
	pass "agent_new_key (mode $mode, 64 hex digits; an existing file is not overwritten)"
else
	fail agent_new_key "rc=$rc mode=$mode hex=$hex second rc=$rc2: $(cat "$TMP/new2.err")"
fi

cp "$TMP/agent.key" "$TMP/open.key"
chmod 644 "$TMP/open.key"
"$IOTRAIL" agent --key "$TMP/open.key" 2> "$TMP/mode.err"; rc=$?
one_line_fail agent_key_mode $rc "$TMP/mode.err" "mode 0644.*chmod 600" && pass agent_key_mode

# ---- an agent on a free loopback port ----
make_loop 128 none || { fail agent_setup "cannot set up a loop device"; exit 1; }
PORT=$((20000 + RANDOM % 20000))
start_agent "$TMP/agent.key" "$PORT" || { fail agent_setup "$AGENT_WHY"; exit 1; }

TARGET=(--target "127.0.0.1:$PORT" --key "$TMP/agent.key" --target-layers block
	--target-dev "$LOOPNAME")

# ---- the merged file: fio on the device, recorded on both "machines" ----
"$IOTRAIL" record -o "$TMP/m.trail" --layers block --dev "$LOOPNAME" "${TARGET[@]}" -- \
	fio --name=agent --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 \
	--ioengine=psync --size=64M --io_size=24M --output-format=json \
	--output="$TMP/fio.json" 2> "$TMP/m.err"; rc=$?
want=$(jq '.jobs[0].read.total_ios' "$TMP/fio.json" 2>/dev/null)
got1=$("$IOTRAIL" report --machine 1 --json "$TMP/m.trail" 2>/dev/null \
	| jq "[.groups[] | select(.key.op == \"read\" and .key.dev == \"$LOOPNAME\") | .count] | add")
machines=$("$IOTRAIL" report "$TMP/m.trail" 2>/dev/null | grep -cE '^  [01] +(initiator|target) ')
if [ $rc -eq 0 ] && [ "$machines" = 2 ] && [ -n "$want" ] && [ "$want" -gt 0 ] \
	&& [ "$got1" = "$want" ]; then
	pass "agent_merged (2 machines; machine 1 read $got1 I/Os on $LOOPNAME, fio $want)"
else
	fail agent_merged "rc=$rc machines=$machines machine 1 reads=$got1 fio=$want: $(tail -2 "$TMP/m.err" | tr '\n' '|')"
fi

# machine 0's analysis is its own: the target's events are not mixed in
got0=$(jq_report "$TMP/m.trail" "[.groups[] | select(.key.op == \"read\") | .count] | add")
note=$("$IOTRAIL" report "$TMP/m.trail" 2>/dev/null | grep -o '[0-9]* records of machine 1 (target) not analysed yet')
if [ "$got0" = "$want" ] && [ -n "$note" ] && [ -z "$(ls "$TMP"/m.trail.* 2>/dev/null)" ]; then
	pass "agent_machine0_alone (machine 0 read $got0; $note; no temporary file left)"
else
	fail agent_machine0_alone "machine 0 reads=$got0 fio=$want note='$note' left: $(ls "$TMP"/m.trail.* 2>/dev/null)"
fi

# the clock of this machine against itself: offset 0 within the uncertainty,
# which is above 0 and below the best round trip measured
line=$("$IOTRAIL" report "$TMP/m.trail" 2>/dev/null | grep -m1 'clock: its time')
off=$(echo "$line" | sed -n 's/.*its time \([-+0-9]*\) ns.*/\1/p')
unc=$(echo "$line" | sed -n 's/.*+- \([0-9]*\) ns.*/\1/p')
rtt=$(sed -n 's/.*best round trip \([0-9]*\) ns.*/\1/p' "$TMP/m.err")
off=${off#+}
if [ -n "$off" ] && [ -n "$unc" ] && [ -n "$rtt" ] && [ "$unc" -gt 0 ] && [ "$unc" -lt "$rtt" ] \
	&& [ "${off#-}" -le "$unc" ]; then
	pass "agent_clock (offset $off ns +- $unc ns, best round trip $rtt ns)"
else
	fail agent_clock "offset '$off' uncertainty '$unc' round trip '$rtt' ($line)"
fi

# ---- faults: one line on each end, nothing written ----
other="$TMP/other.key"
"$IOTRAIL" agent --new-key "$other" 2>/dev/null
: > "$TMP/agent.mark"
"$IOTRAIL" record -o "$TMP/w.trail" --layers block --target "127.0.0.1:$PORT" --key "$other" \
	-- true 2> "$TMP/w.err"; rc=$?
sleep 0.3
if one_line_fail agent_wrong_key $rc "$TMP/w.err" "keys differ"; then
	if grep -q "refused a connection.*keys differ" "$TMP/agent.log" && [ ! -e "$TMP/w.trail" ]; then
		pass "agent_wrong_key (both ends: keys differ)"
	else
		fail agent_wrong_key "agent log: $(tail -1 "$TMP/agent.log"); file left: $(ls "$TMP"/w.trail* 2>/dev/null)"
	fi
fi

IOTRAIL_AGENT_PROTOCOL=9 "$IOTRAIL" record -o "$TMP/v.trail" --layers block "${TARGET[@]}" \
	-- true 2> "$TMP/v.err"; rc=$?
sleep 0.3
if one_line_fail agent_version $rc "$TMP/v.err" "unsupported protocol version 9"; then
	if grep -q "refused: unsupported protocol version 9" "$TMP/agent.log" && [ ! -e "$TMP/v.trail" ]; then
		pass "agent_version (both ends name version 9)"
	else
		fail agent_version "agent log: $(tail -1 "$TMP/agent.log")"
	fi
fi

# a port nothing listens on: the agent's own port, just closed
FREE=$((PORT + 1))
"$IOTRAIL" record -o "$TMP/u.trail" --layers block --target "127.0.0.1:$FREE" \
	--key "$TMP/agent.key" -- true 2> "$TMP/u.err"; rc=$?
one_line_fail agent_unreachable $rc "$TMP/u.err" "cannot connect.*iotrail agent" \
	&& [ ! -e "$TMP/u.trail" ] && pass agent_unreachable

# the target's recorder cannot start (here: a device it does not have; a
# kernel without the hooks takes the same path with the recorder's line)
"$IOTRAIL" record -o "$TMP/t.trail" --layers block --target "127.0.0.1:$PORT" \
	--key "$TMP/agent.key" --target-dev nosuchdisk -- true 2> "$TMP/t.err"; rc=$?
sleep 0.3
if one_line_fail agent_target_fails $rc "$TMP/t.err" "failed to start recording on the target.*nosuchdisk"; then
	if grep -q "cannot record:.*nosuchdisk" "$TMP/agent.log" && [ ! -e "$TMP/t.trail" ]; then
		pass agent_target_fails
	else
		fail agent_target_fails "agent log: $(tail -1 "$TMP/agent.log")"
	fi
fi

# one session at a time: a second initiator is told the agent is busy
: > "$TMP/b1.err"
"$IOTRAIL" record -o "$TMP/b1.trail" --layers block "${TARGET[@]}" -- sleep 4 2> "$TMP/b1.err" &
FIRST=$!
for i in $(seq 100); do grep -q "recording, hooks" "$TMP/b1.err" && break; sleep 0.1; done
"$IOTRAIL" record -o "$TMP/b2.trail" --layers block "${TARGET[@]}" -- true 2> "$TMP/b2.err"; rc=$?
wait $FIRST; rc1=$?
if one_line_fail agent_busy $rc "$TMP/b2.err" "busy.*wait until it ends"; then
	if [ $rc1 -eq 0 ] && [ -e "$TMP/b1.trail" ] && [ ! -e "$TMP/b2.trail" ] \
		&& grep -q "refused: a recording session is running" "$TMP/agent.log"; then
		pass "agent_busy (the first session went on and wrote its file)"
	else
		fail agent_busy "first exit $rc1, files: $(ls "$TMP"/b?.trail 2>/dev/null | tr '\n' ' ')"
	fi
fi

# the agent's session killed outright mid-run: the initiator's file is
# whole, with the target's data up to its last pull and a warning
# (once pulls brought I/O: 64 KiB in the initiator's copy, not a time that a
# loaded machine can miss)
kill_recorder_when "$TMP/k.trail.target1" $AGENT
"$IOTRAIL" record -o "$TMP/k.trail" --layers block --dev "$LOOPNAME" "${TARGET[@]}" -- \
	fio --name=kill --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--size=64M --time_based --runtime=5 > /dev/null 2> "$TMP/k.err"; rc=$?
wait $KILLER
trunc=$(jq_report "$TMP/k.trail" '.truncated' 2>/dev/null)
ios1=$("$IOTRAIL" report --machine 1 --json "$TMP/k.trail" 2>/dev/null | jq '.ios')
warn=$("$IOTRAIL" report "$TMP/k.trail" 2>/dev/null | grep -c "WARNING: machine 1's data is incomplete")
jwarn=$(jq_report "$TMP/k.trail" '.machines[1].incomplete // empty' 2>/dev/null | grep -c lost)
if [ $rc -eq 0 ] && [ "$trunc" = false ] && [ "${ios1:-0}" -gt 0 ] && [ "$warn" = 1 ] \
	&& [ "$jwarn" = 1 ] \
	&& grep -q "warning: agent .* lost" "$TMP/k.err"; then
	pass "agent_killed (file whole, machine 1 has $ios1 I/Os up to its last pull, report warns)"
else
	fail agent_killed "rc=$rc truncated=$trunc machine 1 I/Os=$ios1 warning=$warn json=$jwarn: $(grep -m2 -E 'warning|failed' "$TMP/k.err" | tr '\n' '|')"
fi

# SIGTERM: the agent stops cleanly, no recorder or spool left behind
kill -TERM $AGENT
for i in $(seq 50); do kill -0 $AGENT 2>/dev/null || break; sleep 0.1; done
wait $AGENT; rc=$?
left=$(pgrep -f "record -o .*/iotrail-agent\.[^/]*/target.trail" | head -1)
if [ $rc -eq 0 ] && grep -q "iotrail agent: stopped" "$TMP/agent.log" && [ -z "$left" ]; then
	pass agent_sigterm
else
	fail agent_sigterm "exit $rc, recorder left: '$left', log: $(tail -1 "$TMP/agent.log")"
fi
exit 0
