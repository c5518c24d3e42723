#!/usr/bin/env bash
# The scope holds for every layer (src/scope.h, bpf/scope.bpf.h):
#  1. -p with several PIDs, in the form `-p $(pidof x)` gives (the PIDs as
#     separate words): three fio processes read one loop device at once,
#     the second as the child of a shell; the recording with -p of the
#     first and of that shell counts exactly the two fio's reads (their
#     own total_ios) in the block layer AND their pread64 calls in the
#     syscall layer (the child's as a descendant), none of the third's.
#  2. --comm NAME keeps a process by name, and its descendants: fio
#     started as a child of a shell renamed `itscope` is recorded; a fio
#     of another shell is not.
#  3. By default every process, for every layer, even with a COMMAND:
#     a fio that is not COMMAND's child has its pread64 calls recorded.
#  4. A layer that recorded nothing while its devices were busy is warned
#     of: -p of an idle process while fio reads; the record summary and
#     the report say so, with the kernel's count (== fio's total_ios).
#  5. --cgroup: a fio in a cgroup v2 directory is recorded by both layers,
#     one outside it by neither.
#  6. The help's own example, `iotrail record -d 1 -p $(pidof NAME)` with
#     three processes of that name, records (it used to take the other
#     PIDs for a COMMAND).
#  7. Every thread in -p's scope, however it came: a process whose two
#     threads existed before the recorder started, whose main thread reads,
#     which then creates two threads and forks a child with a thread of its
#     own (tests/progs/thread_calls): each of the seven threads' pread64
#     calls recorded, exactly (under -p, sys_enter takes a thread without
#     storage for one out of scope: syscall.bpf.c, enter_slot); and --tid
#     of one old thread: its calls alone. The same with the per-call
#     tracepoints (--syscall-hook tracepoint), whose sys_enter takes the
#     same fast path.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

why=$(host_blocker)
if [ -n "$why" ]; then
	for t in record_pid record_comm record_default_scope record_silent_layer record_cgroup \
		record_pidof_form record_pid_threads record_pid_threads_tracepoint record_tid_old; do
		skip $t "$why"
	done
	exit 0
fi
make_loop 128 none || { fail record_pid "cannot set up a loop device"; exit 1; }

# The readers start once the recorder is ready, at a gate: $TMP/go.NAME,
# made by the test when the trace file appears, or by COMMAND, which runs
# only once the probes are attached (not after a fixed delay: loading the
# probes took over 5 s on a busy machine)
gate() { while [ ! -e "$TMP/go.$1" ]; do sleep 0.05; done; }
# a fixed-count reader; exec: the pid is fio's; --thread: the job runs in
# that process. The processes left out read through io_uring: its requests
# are recorded at their submission, which must apply the scope as a system
# call does
job() { # name nios gate [ioengine]
	gate "$3"
	exec fio --thread --name="$1" --filename="$LOOPDEV" --rw=randread --bs=4k --direct=1 \
		--ioengine="${4:-psync}" --number_ios="$2" --size=120M \
		--output-format=json --output="$TMP/$1.json"
}
# wait_trace FILE PID: until the recorder has its probes attached
wait_trace() {
	for i in $(seq 1 600); do [ -s "$1" ] && return 0; sleep 0.1; done
	kill "$2"; return 1
}
fio_ios() { jq -r '.jobs[0].read.total_ios' "$TMP/$1.json"; }
# block reads of one pid; pread64 calls on the loop device of one pid
block_reads() {
	"$IOTRAIL" report --json --group-by op,pid "$1" \
		| jq -r "[.groups[] | select(.key.op == \"read\" and .key.pid == $2) | .count] | add // 0"
}
preads() {
	"$IOTRAIL" report --json --events "$1" \
		| jq -r "[.events[] | select(.call == \"pread64\" and .pid == $2 and .path == \"$LOOPDEV\")] | length"
}

# ---- 1. several PIDs, pidof's form ----
job one 3000 p > /dev/null 2>&1 & one=$!
# a shell that forks fio once the recorder is up (the fork hook adds the
# child: the descendants alive at start come from /proc, see case 2)
bash -c 'while [ ! -e "$2" ]; do sleep 0.05; done
	fio --thread --name=two --filename="$0" --rw=randread --bs=4k --direct=1 \
	--ioengine=psync --number_ios=2000 --size=120M --output-format=json \
	--output="$1"; true' "$LOOPDEV" "$TMP/two.json" "$TMP/go.p" > /dev/null 2>&1 & two=$!
job three 1500 p io_uring > /dev/null 2>&1 & three=$!
"$IOTRAIL" record -o "$TMP/pid.trail" --layers block,syscall --dev "$LOOPNAME" -p $one $two -d 30 \
	> "$TMP/rec.out" 2>&1 &
rec=$!
wait_trace "$TMP/pid.trail" $rec || { fail record_pid "the recorder was not ready within 60 s"; exit 1; }
touch "$TMP/go.p"
for i in $(seq 1 50); do child=$(pgrep -P $two -x fio) && break; sleep 0.1; done
wait $one $two $three
kill -INT $rec; wait $rec
want1=$(fio_ios one) want2=$(fio_ios two)
got1=$(block_reads "$TMP/pid.trail" $one) got2=$(block_reads "$TMP/pid.trail" "${child:-0}")
sys1=$(preads "$TMP/pid.trail" $one) sys2=$(preads "$TMP/pid.trail" "${child:-0}")
bpids=$("$IOTRAIL" report --json --group-by pid "$TMP/pid.trail" | jq -r '[.groups[].key.pid] | unique | join(",")')
# the shell's own calls and its children's (sleep, fio) are in scope too,
# and the children of the first (its gate's sleep before it became fio);
# no other process's
strays=$("$IOTRAIL" report --json --events "$TMP/pid.trail" \
	| jq -r "[.events[] | select(.pid != $one and .pid != $two and .ppid != $two and .ppid != $one) | .pid]
		 | unique | join(\",\")")
want_pids=$(printf '%s\n' $one "${child:-0}" | sort -n | paste -sd,)
if [ "$got1" = "$want1" ] && [ "$got2" = "$want2" ] && [ "$sys1" = "$want1" ] && [ "$sys2" = "$want2" ] \
	&& [ "$bpids" = "$want_pids" ] && [ -z "$strays" ]; then
	pass "record_pid (-p $one $two: block reads $got1 + $got2 (of $two's child $child) and pread64 calls $sys1 + $sys2 == fio's total_ios; pid $three's 1500 left out by both layers)"
else
	fail record_pid "-p $one $two (child $child): block reads $got1/$got2, pread64 $sys1/$sys2, want $want1/$want2; block pids '$bpids', want $want_pids; syscall events of other pids '$strays' ($(tail -1 "$TMP/rec.out"))"
fi

# ---- 2. --comm with descendants ----
# bash -c 'exec -a' cannot rename; a copy of sh under another name can
cp "$(command -v sh)" "$TMP/itscope"
"$TMP/itscope" -c "while [ ! -e $TMP/go.c ]; do sleep 0.05; done
	fio --thread --name=mine --filename=$LOOPDEV --rw=randread --bs=4k --direct=1 \
	--ioengine=psync --number_ios=1200 --size=120M --output-format=json \
	--output=$TMP/mine.json; true" > /dev/null 2>&1 & mine=$!
job other 800 c > /dev/null 2>&1 & other=$!
"$IOTRAIL" record -o "$TMP/comm.trail" --layers block,syscall --dev "$LOOPNAME" --comm itscope -d 30 \
	> "$TMP/rec2.out" 2>&1 &
rec=$!
wait_trace "$TMP/comm.trail" $rec || { fail record_comm "the recorder was not ready within 60 s"; exit 1; }
touch "$TMP/go.c"
wait $mine $other
kill -INT $rec; wait $rec
want=$(fio_ios mine)
got=$("$IOTRAIL" report --json "$TMP/comm.trail" | jq -r '[.groups[] | select(.key.op == "read") | .count] | add // 0')
calls=$("$IOTRAIL" report --json --events "$TMP/comm.trail" \
	| jq -r "[.events[] | select(.call == \"pread64\" and .path == \"$LOOPDEV\")] | length")
ogot=$(block_reads "$TMP/comm.trail" $other)
if [ "$got" = "$want" ] && [ "$calls" = "$want" ] && [ "$ogot" = 0 ]; then
	pass "record_comm (--comm itscope: its child fio's $got block reads and $calls pread64 calls == its total_ios; the other fio's 800 left out)"
else
	fail record_comm "--comm itscope: $got block reads, $calls pread64 calls, want $want; $ogot of the other fio ($(tail -1 "$TMP/rec2.out"))"
fi

# ---- 3. default: every process, whatever COMMAND is ----
job bg 1000 d > /dev/null 2>&1 & bg=$!
"$IOTRAIL" record -o "$TMP/all.trail" --layers block,syscall --dev "$LOOPNAME" -- \
	sh -c "touch $TMP/go.d; while kill -0 $bg 2>/dev/null; do sleep 0.2; done" > "$TMP/rec3.out" 2>&1
wait $bg
want=$(fio_ios bg)
got=$(block_reads "$TMP/all.trail" $bg)
calls=$(preads "$TMP/all.trail" $bg)
if [ "$got" = "$want" ] && [ "$calls" = "$want" ]; then
	pass "record_default_scope (fio pid $bg, not COMMAND's child: $got block reads and $calls pread64 calls == its total_ios)"
else
	fail record_default_scope "fio pid $bg: $got block reads and $calls pread64 calls, want $want ($(tail -1 "$TMP/rec3.out"))"
fi

# ---- 4. nothing recorded while the device was busy: warned
sleep 60 & idle=$!
job busy 1500 s io_uring > /dev/null 2>&1 & busy=$!
"$IOTRAIL" record -o "$TMP/silent.trail" --layers block,syscall --dev "$LOOPNAME" -p $idle -- \
	sh -c "touch $TMP/go.s; while kill -0 $busy 2>/dev/null; do sleep 0.2; done" > "$TMP/rec4.out" 2>&1
kill $idle
want=$(fio_ios busy)
warned=$(grep -c "warning: the .* layer recorded nothing while its devices completed $want I/Os" "$TMP/rec4.out")
kreads=$("$IOTRAIL" report --json "$TMP/silent.trail" | jq -r ".diskstats.$LOOPNAME.reads")
rwarn=$("$IOTRAIL" report "$TMP/silent.trail" | grep -c "WARNING: the block layer recorded no I/O while its devices completed")
# control: the first recording (block I/O recorded) has no such warning
quiet=$(grep -c "recorded nothing" "$TMP/rec.out")
if [ "$warned" = 2 ] && [ "$kreads" = "$want" ] && [ "$rwarn" = 1 ] && [ "$quiet" = 0 ]; then
	pass "record_silent_layer (-p of an idle process while fio read $want blocks: both layers warned in the summary, the report warns, diskstats reads $kreads; no warning when I/O was recorded)"
else
	fail record_silent_layer "summary warnings $warned (want 2), report warnings $rwarn (want 1), diskstats reads $kreads (want $want), warnings of a recording with I/O $quiet (want 0): $(tail -2 "$TMP/rec4.out" | tr '\n' '|')"
fi

# ---- 5. --cgroup
CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$CG" ] || ! mkdir "$CG/iotrail-it.$$" 2>/dev/null; then
	skip record_cgroup "no writable cgroup v2 mount"
else
	CG=$CG/iotrail-it.$$
	# the shell moves itself into the cgroup, then becomes fio
	sh -c "echo \$\$ > $CG/cgroup.procs && while [ ! -e $TMP/go.g ]; do sleep 0.05; done &&
		exec fio --thread --name=cg --filename=$LOOPDEV \
		--rw=randread --bs=4k --direct=1 --ioengine=psync --number_ios=700 --size=120M \
		--output-format=json --output=$TMP/cg.json" > /dev/null 2>&1 & in=$!
	job nocg 500 g > /dev/null 2>&1 & out=$!
	"$IOTRAIL" record -o "$TMP/cg.trail" --layers block,syscall --dev "$LOOPNAME" --cgroup "$CG" -- \
		sh -c "touch $TMP/go.g; while kill -0 $in 2>/dev/null || kill -0 $out 2>/dev/null; do sleep 0.2; done" \
		> "$TMP/rec5.out" 2>&1
	want=$(fio_ios cg)
	got=$(block_reads "$TMP/cg.trail" $in) calls=$(preads "$TMP/cg.trail" $in)
	ogot=$(block_reads "$TMP/cg.trail" $out) ocalls=$(preads "$TMP/cg.trail" $out)
	rmdir "$CG"
	if [ "$got" = "$want" ] && [ "$calls" = "$want" ] && [ "$ogot" = 0 ] && [ "$ocalls" = 0 ]; then
		pass "record_cgroup (fio in the cgroup: $got block reads and $calls pread64 calls == its total_ios; the one outside: none)"
	else
		fail record_cgroup "in the cgroup: $got reads, $calls calls, want $want; outside: $ogot reads, $ocalls calls, want 0 ($(tail -1 "$TMP/rec5.out"))"
	fi
fi

# ---- 6. -p $(pidof NAME): the PIDs as separate words, options after them
cp "$(command -v sleep)" "$TMP/itsleeper"
for _ in 1 2 3; do "$TMP/itsleeper" 30 & done
# until the three have exec'd
for _ in $(seq 1 50); do
	pids=$(pidof itsleeper)
	[ "$(echo $pids | wc -w)" = 3 ] && break
	sleep 0.1
done
# shellcheck disable=SC2086 # the words pidof prints, as a shell passes them
if "$IOTRAIL" record -o "$TMP/pidof.trail" -p $pids -d 1 > "$TMP/rec6.out" 2>&1 \
	&& "$IOTRAIL" report --json "$TMP/pidof.trail" > /dev/null 2>&1 && [ "$(echo $pids | wc -w)" = 3 ]; then
	pass "record_pidof_form (record -p $pids -d 1: recorded, $(grep '^iotrail record: [0-9]' "$TMP/rec6.out" | cut -d, -f1))"
else
	fail record_pidof_form "record -p $pids -d 1: $(tail -1 "$TMP/rec6.out")"
fi
kill $pids 2>/dev/null

# ---- 7. threads there before the recorder, made after, and a child's
PROGS=$(dirname "$IOTRAIL")/tests
head -c 4096 /dev/urandom > "$TMP/tc.data"
# calls per thread, pread64 of thread_calls' file, per tid: "TID COUNT"
per_tid() {
	"$IOTRAIL" report --json --events "$1" | jq -r "[.events[] | select(.call == \"pread64\" and
		.path == \"$TMP/tc.data\")] | group_by(.tid) | .[] | \"\\(.[0].tid) \\(length)\""
}
thread_run() { # NAME RECORD-OPTIONS...: thread_calls under a recorder; sets tc_pid, tc_tids
	local name=$1
	shift
	"$PROGS/thread_calls" "$TMP/$name.tids" "$TMP/$name.go" "$TMP/tc.data" 700 &
	tc_pid=$!
	for _ in $(seq 1 100); do [ -s "$TMP/$name.tids" ] && break; sleep 0.05; done
	tc_tids=$(cat "$TMP/$name.tids" 2>/dev/null)
	# shellcheck disable=SC2046 # the options as words
	"$IOTRAIL" record -v --layers syscall -o "$TMP/$name.trail" $(eval echo "$@") -- \
		sh -c "touch $TMP/$name.go; while kill -0 $tc_pid 2>/dev/null; do sleep 0.05; done" \
		> "$TMP/$name.out" 2>&1
	wait $tc_pid
}
# NAME, HOW (the words in the line), RECORD-OPTIONS...: every thread of
# thread_calls under -p, exactly
pid_threads() {
	local name=$1 dir=$2 how=$3
	shift 3
	thread_run "$dir" "$@"
	tc_rc=$?
	got=$(per_tid "$TMP/$dir.trail")
	threads=$(echo "$got" | grep -c ' 700$')
	others=$(echo "$got" | grep -vc ' 700$')
	olds=0
	for t in $tc_tids; do echo "$got" | grep -q "^$t 700$" && olds=$((olds + 1)); done
	marked=$(sed -n 's/.*syscall: \([0-9]*\) threads in scope marked at the start.*/\1/p' "$TMP/$dir.out")
	if [ "$tc_rc" = 0 ] && [ "$threads" = 7 ] && [ "$others" = 0 ] && [ "$olds" = 2 ] && [ "$marked" = 3 ]; then
		pass "$name (-p $tc_pid$how: 7 threads x 700 pread64 calls, the 2 there before the recorder ($tc_tids), the main one, 2 made after, a forked child and its thread; 3 threads marked at the start)"
	else
		fail "$name" "-p $tc_pid$how (exit $tc_rc): per thread (tid calls): $(echo $got); want 7 threads of 700 with the old $tc_tids; threads marked at the start '$marked', want 3 ($(tail -1 "$TMP/$dir.out"))"
	fi
}
pid_threads record_pid_threads tcp "" '-p $tc_pid'
# the per-call tracepoints' programs take the same fast path under -p
pid_threads record_pid_threads_tracepoint tcpt ", --syscall-hook tracepoint" \
	'-p $tc_pid --syscall-hook tracepoint'
thread_run tct '--tid ${tc_tids%% *}'
tc_rc=$?
got=$(per_tid "$TMP/tct.trail")
if [ "$tc_rc" = 0 ] && [ "$got" = "${tc_tids%% *} 700" ]; then
	pass "record_tid_old (--tid ${tc_tids%% *}, a thread there before the recorder: its 700 pread64 calls alone)"
else
	fail record_tid_old "--tid ${tc_tids%% *} (exit $tc_rc): per thread (tid calls): $(echo $got); want ${tc_tids%% *} 700 ($(tail -1 "$TMP/tct.out"))"
fi
exit ${FAILED:-0}
