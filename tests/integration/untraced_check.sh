#!/usr/bin/env bash
# `iotrail probe --untraced` (the threads this kernel runs no probe for while
# they are current) against ftrace's record of the same context switches.
# ftrace's window lies inside iotrail's (it opens once iotrail says it is
# counting and closes before it stops), so a thread iotrail lists (switched
# in twice and never away in its window) was never switched away in
# ftrace's either, and a thread ftrace saw switched in twice and never away
# (which no thread a probe runs for can be) is one iotrail lists. On a
# stock kernel both lists are empty (tests/vm/test_syscall.sh runs this in
# the VM); on the development host they hold the sandbox agent's threads
# (README, Known problems).
#   tests/integration/untraced_check.sh IOTRAIL TMPDIR NAME
# Prints one PASS, FAIL or SKIP line named NAME; exits 1 on FAIL.
set -u
IOTRAIL=$1 TMP=$2 name=$3
tracefs=/sys/kernel/tracing
[ -d $tracefs/events ] || mount -t tracefs nodev $tracefs 2>/dev/null
inst=$tracefs/instances/iotrail-test-untraced.$$
bad=""
mkdir "$inst" 2>/dev/null || { echo "SKIP $name: cannot make a tracefs instance"; exit 0; }
# every thread's CPU time so far, the bound on what iotrail says one ran in its window
ran_of() { for f in /proc/[0-9]*/task/[0-9]*/schedstat; do t=${f%/schedstat}; echo "${t##*/} $(cut -d' ' -f1 "$f" 2>/dev/null)"; done 2>/dev/null; }
ran_of > "$TMP/ran.before"
"$IOTRAIL" probe --layer block --untraced 5 --json > "$TMP/untraced.json" 2> "$TMP/untraced.err" &
pid=$!
for _ in $(seq 300); do
	grep -q "counting context switches" "$TMP/untraced.err" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
echo 1 > "$inst/events/sched/sched_switch/enable"
sleep 3
echo 0 > "$inst/events/sched/sched_switch/enable"
sed -n 's/.*prev_pid=\([0-9]*\) .* next_pid=\([0-9]*\) .*/\1 \2/p' "$inst/trace" > "$TMP/switches"
rmdir "$inst"
if ! wait "$pid"; then
	echo "FAIL $name: probe --untraced failed: $(grep -v counting "$TMP/untraced.err" | head -1)"
	exit 1
fi
ran_of > "$TMP/ran.after"
listed=$(jq -r '.untraced.threads[].tid' "$TMP/untraced.json" | sort -n | tr '\n' ' ' | sed 's/ $//')
blind=$(awk '{ away[$1]++; seen_in[$2]++ }
	END { for (t in seen_in) if (t != 0 && seen_in[t] >= 2 && !away[t]) print t }' "$TMP/switches" |
	sort -n | tr '\n' ' ' | sed 's/ $//')
for t in $listed; do
	n=$(awk -v t="$t" '$1 == t' "$TMP/switches" | wc -l)
	[ "$n" -eq 0 ] || bad="$bad; tid $t listed, but ftrace saw it switched away $n times"
	[ "$(jq -r ".untraced.threads[] | select(.tid == $t) | .switched_in" "$TMP/untraced.json")" -ge 2 ] ||
		bad="$bad; tid $t listed with fewer than 2 switches in"
	# what it ran in iotrail's window: at most what the kernel counted
	# for it from before iotrail started to after it ended
	ran=$(jq -r ".untraced.threads[] | select(.tid == $t) | .ran_ns" "$TMP/untraced.json")
	b=$(awk -v t="$t" '$1 == t { print $2 }' "$TMP/ran.before")
	a=$(awk -v t="$t" '$1 == t { print $2 }' "$TMP/ran.after")
	[ -n "$a" ] && [ "$ran" -le $((a - ${b:-0})) ] ||
		bad="$bad; tid $t ran $ran ns in iotrail's window, but ${a:-?} - ${b:-0} ns in all by schedstat"
done
[ "$(jq '[.untraced.threads[].ran_ns] | add // 0' "$TMP/untraced.json")" = "$(jq '.untraced.hidden_ns' "$TMP/untraced.json")" ] ||
	bad="$bad; hidden_ns is not the threads' sum"
[ "$(jq '.untraced.cpu_ns' "$TMP/untraced.json")" = $((5000000000 * $(getconf _NPROCESSORS_ONLN))) ] ||
	bad="$bad; cpu_ns $(jq '.untraced.cpu_ns' "$TMP/untraced.json") is not 5 s times $(getconf _NPROCESSORS_ONLN) CPUs"
for t in $blind; do
	case " $listed " in *" $t "*) ;; *) bad="$bad; ftrace saw tid $t switched in twice, never away: not listed" ;; esac
done
[ "$(jq -r '.untraced.switches' "$TMP/untraced.json")" -gt 0 ] || bad="$bad; no switch counted"
[ -s "$TMP/switches" ] || bad="$bad; ftrace recorded no switch"
if [ -n "$bad" ]; then
	echo "FAIL $name: ${bad#; }"
	exit 1
fi
echo "PASS $name (iotrail lists: ${listed:-none}, $(jq -r '(.untraced.hidden_ns / 1e5 | floor) / 10' "$TMP/untraced.json") ms run by them, within schedstat's; ftrace, switched in twice and never away inside that window: ${blind:-none}; $(wc -l < "$TMP/switches") switches in ftrace's window)"
