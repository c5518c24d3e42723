#!/usr/bin/env bash
# The syscall layer against a program that says what it did
# (tests/progs/syscall_seq.c writes a manifest of its calls): iotrail's
# event list must be exactly those calls, in order, with the same fd,
# offset, count, return, errno, file type and path. Then the filters:
# processes outside the traced tree leave no events, --comm and --calls
# narrow it down; and bad input gets one line and a non-zero exit.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh
. tests/integration/lib_syscall.sh
TESTS="syscall_seq_exact syscall_compat_seq_exact syscall_filtered_out syscall_comm_filter syscall_calls_filter syscall_uring_tags syscall_uring_join syscall_compat_uring_join syscall_uring_punted syscall_ppid_cgroup_follow syscall_every_call syscall_compat_every_call syscall_errors"

why=$(sys_blocker)
if [ -n "$why" ]; then
	for t in $TESTS; do skip "$t" "$why"; done
	exit 0
fi

# The event list as the manifest writes it: call fd offset count ret errno type path
events_tsv() {
	"$IOTRAIL" report --json --events "$1" | jq -r '.events[] | [
		.call,
		(if .fd == -1 then "-" else (.fd | tostring) end),
		(if .offset == null then "-" else (.offset | tostring) end),
		(if .count == null then "-" else (.count | tostring) end),
		(if .errno != "" then "-1" else (.ret | tostring) end),
		(if .errno != "" then .errno else "-" end),
		(if .file_type == "" then "-" else .file_type end),
		.path] | @tsv'
}

# Whether case $1 is a compat one (IOTRAIL_SYSCALL_COMPAT=1) whose record
# output $2 (record -v) does not say that the compat programs loaded.
compat_missing() {
	[[ $1 == *_compat_* ]] && ! grep -q "programs for kernels without bpf_rdonly_cast" "$2"
}

# ---- the sequence, call by call: NAME, then env assignments for record
# (IOTRAIL_SYSCALL_COMPAT=1: the programs for kernels without
# bpf_rdonly_cast, what Debian's 6.1 loads: tests/vm/test_syscall.sh)
seq_exact() {
	local n=$1 dir=$TMP/$1
	shift
	mkdir -p "$dir"
	if ! env "$@" "$IOTRAIL" record -v --layers syscall --path "$dir" -o "$TMP/$n.trail" -- \
		"$PROGS/syscall_seq" "$dir" "$TMP/$n.manifest" > "$TMP/$n.out" 2>&1; then
		fail "$n" "record failed: $(tail -1 "$TMP/$n.out")"
	elif compat_missing "$n" "$TMP/$n.out"; then
		fail "$n" "IOTRAIL_SYSCALL_COMPAT=1 did not load the compat programs: $(tail -1 "$TMP/$n.out")"
	elif ! events_tsv "$TMP/$n.trail" > "$TMP/$n.got" 2> "$TMP/$n.err"; then
		fail "$n" "report failed: $(head -1 "$TMP/$n.err")"
	elif ! diff "$TMP/$n.manifest" "$TMP/$n.got" > "$TMP/$n.diff"; then
		fail "$n" "event list differs from what the program did: $(head -4 "$TMP/$n.diff" | tr '\n' '|')"
	else
		pass "$n ($(wc -l < "$TMP/$n.got") calls match the program's own list)"
	fi
}
seq_exact syscall_seq_exact
seq_exact syscall_compat_seq_exact IOTRAIL_SYSCALL_COMPAT=1

# ---- a process outside -p's tree works in the same directory
DIR=$TMP/filt
mkdir -p "$DIR"
echo data > "$DIR/other.txt"
# (a separate bash: a subshell would inherit lib.sh's EXIT trap and clean up on kill)
bash -c 'while :; do cat "$1" > /dev/null; sleep 0.01; done' reader "$DIR/other.txt" &
BG=$!
# control: recorded system-wide, its reads are there
"$IOTRAIL" record --layers syscall --path "$DIR" -d 0.5 -o "$TMP/all.trail" > /dev/null 2>&1
n_all=$("$IOTRAIL" report --json --events "$TMP/all.trail" 2>/dev/null |
	jq '[.events[] | select(.comm == "cat")] | length')
# the program runs as a child of the -p process once the recorder is up:
# record starts COMMAND only after its probes are attached, and COMMAND
# says so through a file (a fixed sleep lost the race on a loaded machine);
# COMMAND then only bounds the recording
READY=$TMP/filt.ready
bash -c 'while [ ! -e "$1" ]; do sleep 0.05; done; shift; "$@"' waiter \
	"$READY" "$PROGS/syscall_seq" "$DIR" "$TMP/filt.manifest" > /dev/null 2>&1 &
P=$!
"$IOTRAIL" record --layers syscall --path "$DIR" -p $P -o "$TMP/filt.trail" -- \
	sh -c "touch $READY; while kill -0 $P 2>/dev/null; do sleep 0.1; done" > /dev/null 2>&1
kill "$BG" 2>/dev/null
wait "$BG" 2>/dev/null
others=$("$IOTRAIL" report --json --events "$TMP/filt.trail" 2>/dev/null |
	jq '[.events[] | select(.comm != "syscall_seq")] | length')
ours=$("$IOTRAIL" report --json --events "$TMP/filt.trail" 2>/dev/null | jq '.events | length')
if [ "${n_all:-0}" -lt 1 ]; then
	fail syscall_filtered_out "control: a system-wide recording saw no read of the other process"
elif [ "$others" != 0 ]; then
	fail syscall_filtered_out "$others events of processes outside -p $P and its descendants"
elif [ "$ours" != "$(wc -l < "$TMP/filt.manifest")" ]; then
	fail syscall_filtered_out "$ours events, the program (a child of -p $P) made $(wc -l < "$TMP/filt.manifest") calls"
else
	pass "syscall_filtered_out (other process: $n_all calls system-wide, 0 under -p; $ours of the -p process's child)"
fi

# ---- --comm and --calls
DIR=$TMP/comm
mkdir -p "$DIR"
"$IOTRAIL" record --layers syscall --path "$DIR" --comm nosuchcomm -o "$TMP/comm.trail" -- \
	"$PROGS/syscall_seq" "$DIR" "$TMP/comm.manifest" > /dev/null 2>&1
n=$("$IOTRAIL" report --json "$TMP/comm.trail" 2>/dev/null | jq '.syscall_calls')
rm -rf "$DIR"/*
"$IOTRAIL" record --layers syscall --path "$DIR" --comm syscall_s -o "$TMP/comm2.trail" -- \
	"$PROGS/syscall_seq" "$DIR" "$TMP/comm.manifest" > /dev/null 2>&1
m=$("$IOTRAIL" report --json "$TMP/comm2.trail" 2>/dev/null | jq '.syscall_calls')
if [ "$n" = 0 ] && [ "$m" = "$(wc -l < "$TMP/comm.manifest")" ]; then
	pass "syscall_comm_filter (--comm nosuchcomm: 0 calls; --comm syscall_s: $m)"
else
	fail syscall_comm_filter "--comm nosuchcomm gave ${n:-?} calls (want 0), --comm syscall_s ${m:-?}"
fi

DIR=$TMP/calls
mkdir -p "$DIR"
"$IOTRAIL" record --layers syscall --path "$DIR" --calls sync -o "$TMP/calls.trail" -- \
	"$PROGS/syscall_seq" "$DIR" "$TMP/calls.manifest" > /dev/null 2>&1
got=$("$IOTRAIL" report --json --events "$TMP/calls.trail" 2>/dev/null | jq -r '[.events[].call] | join(",")')
if [ "$got" = "fsync,fdatasync" ]; then
	pass "syscall_calls_filter (--calls sync: $got)"
else
	fail syscall_calls_filter "--calls sync recorded '$got', want fsync,fdatasync"
fi

# ---- io_uring requests carry their file's tag (path), over more files
# than a tag cache holds (two), so the cache is refilled on the way
if ! command -v fio > /dev/null; then
	skip syscall_uring_tags "fio is not installed"
else
	DIR=$TMP/uring
	mkdir -p "$DIR"
	"$IOTRAIL" record --layers syscall --path "$DIR" -o "$TMP/uring.trail" -- \
		fio --name=u --directory="$DIR" --nrfiles=3 --filesize=1M --rw=randread --bs=4k \
		--ioengine=io_uring --iodepth=8 --io_size=3M --file_service_type=random \
		--output-format=json --output="$TMP/uring.json" > /dev/null 2>&1
	want=$(jq '.jobs[0].read.total_ios' "$TMP/uring.json" 2>/dev/null)
	"$IOTRAIL" report --json --events "$TMP/uring.trail" 2>/dev/null |
		jq -r '.events[] | select(.call == "uring_read") | .path' | sort | uniq -c > "$TMP/uring.paths"
	got=$(awk '{ n += $1 } END { print n + 0 }' "$TMP/uring.paths")
	nfiles=$(grep -c "$DIR/u\.0\.[0-2]\$" "$TMP/uring.paths")
	if [ -z "$want" ] || [ "$want" -lt 1 ]; then
		fail syscall_uring_tags "fio did not run: $(head -c 200 "$TMP/uring.json" 2>/dev/null)"
	elif [ "$got" != "$want" ] || [ "$nfiles" != 3 ] || [ "$(wc -l < "$TMP/uring.paths")" != 3 ]; then
		fail syscall_uring_tags "uring_read per path: $(tr -s ' \n' ' ' < "$TMP/uring.paths"); want $want over fio's 3 files"
	else
		pass "syscall_uring_tags ($got io_uring reads == fio's total_ios, each with one of its 3 files' paths)"
	fi
fi

# ---- an io_uring request's two halves (its submission and its
# completion, two records from the kernel) joined by the recorder into one
# call record: every request of fio's is one call record, no completion
# without its submission, none thrown out or left waiting. Direct reads on
# a loop device at QD 32 (completions in the submitting task's task work),
# the same with the programs for kernels without bpf_rdonly_cast, and
# requests handed to io-wq (force_async).
uring_join_run() { # NAME FIO-OPTIONS...: prints "calls unmatched waiting thrown fio-ios"
	local n=$1
	shift
	"$IOTRAIL" record -v --layers syscall -o "$TMP/$n.trail" -- \
		fio --name="$n" --filename="$LOOPDEV" --direct=1 --rw=randread --bs=4k --size=16M \
		--ioengine=io_uring --number_ios=3000 "$@" \
		--output-format=json --output="$TMP/$n.json" > "$TMP/$n.out" 2>&1
	echo "$("$IOTRAIL" report --json "$TMP/$n.trail" 2>/dev/null |
		jq '[.syscalls[] | select(.name == "uring_read") | .count] | add // 0')" \
		"$(sed -n 's/.*io_uring requests: \([0-9]*\) completions without.*/\1/p' "$TMP/$n.out")" \
		"$(sed -n 's/.*, \([0-9]*\) submissions still waiting.*/\1/p' "$TMP/$n.out")" \
		"$(sed -n 's/.*waiting, \([0-9]*\) thrown out.*/\1/p' "$TMP/$n.out")" \
		"$(jq '.jobs[0].read.total_ios' "$TMP/$n.json" 2>/dev/null)"
}
uring_join_check() { # TEST WHAT CALLS UNMATCHED WAITING THROWN FIO-IOS [EXTRA-CONDITION-OK]
	local t=$1 what=$2 calls=$3 unm=$4 wait=$5 thrown=$6 want=$7 extra=${8:-1}
	if [ -n "$want" ] && [ "$want" -ge 3000 ] && [ "$calls" = "$want" ] && [ "$unm" = 0 ] &&
	   [ "$wait" = 0 ] && [ "$thrown" = 0 ] && [ "$extra" = 1 ]; then
		pass "$t ($calls io_uring reads$what == fio's total_ios, joined in the recorder: 0 unmatched, 0 waiting, 0 thrown out)"
	else
		fail "$t" "uring_read calls '$calls', fio '$want'; completions without submission '$unm', submissions waiting '$wait', thrown out '$thrown' (want 0 each)"
	fi
}
if ! command -v fio > /dev/null; then
	skip syscall_uring_join "fio is not installed"
	skip syscall_compat_uring_join "fio is not installed"
	skip syscall_uring_punted "fio is not installed"
elif ! make_loop 16; then
	fail syscall_uring_join "cannot make a loop device"
	fail syscall_compat_uring_join "cannot make a loop device"
	fail syscall_uring_punted "cannot make a loop device"
else
	read -r calls unm wait thrown want <<< "$(uring_join_run ujoin --iodepth=32)"
	uring_join_check syscall_uring_join "" "$calls" "$unm" "$wait" "$thrown" "$want"
	read -r calls unm wait thrown want <<< "$(IOTRAIL_SYSCALL_COMPAT=1 uring_join_run ucjoin --iodepth=32)"
	compat=0
	grep -q "programs for kernels without bpf_rdonly_cast" "$TMP/ucjoin.out" && compat=1
	uring_join_check syscall_compat_uring_join " (the programs for kernels without bpf_rdonly_cast)" \
		"$calls" "$unm" "$wait" "$thrown" "$want" "$compat"
	read -r calls unm wait thrown want <<< "$(uring_join_run upunt --iodepth=8 --force_async=1)"
	uring_join_check syscall_uring_punted " handed to io-wq" "$calls" "$unm" "$wait" "$thrown" "$want"
	drop_loop
fi

# ---- a call's parent and cgroup as they are when it is made (the programs
# keep them per thread and read them again when their pointers change):
# a process that moves to another cgroup, then is reparented, opens a
# file before, between and after; each open carries what the process
# itself read from the kernel then (tests/progs/reparent_cgroup.py).
NAME=syscall_ppid_cgroup_follow
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cg=$cgroot/iotrail-it.${RUNTAG}cg
if [ -z "$cgroot" ] || ! command -v python3 > /dev/null || ! mkdir "$cg" 2> /dev/null; then
	skip "$NAME" "needs python3 and a writable cgroup v2 mount (${cgroot:-none})"
else
	dir=$TMP/$NAME
	mkdir -p "$dir"
	touch "$dir/a" "$dir/b" "$dir/c"
	"$IOTRAIL" record --layers syscall --calls openat --path "$dir" -o "$TMP/$NAME.trail" -- \
		sh -c 'python3 "$1" "$2" "$3" "$4"; i=0
		       while [ ! -e "$2/done" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done' \
		sh tests/progs/reparent_cgroup.py "$dir" "$cg" "$cgroot" > "$TMP/$NAME.out" 2>&1
	got=$("$IOTRAIL" report --json --events "$TMP/$NAME.trail" 2> /dev/null |
	      jq -r --arg d "$dir/" '.events[] | select(.call == "openat" and (.path | ltrimstr($d) | test("^[abc]$")))
	                             | "\(.path | ltrimstr($d)) \(.ppid) \(.cgroup)"')
	want=$(cat "$dir/truth" 2> /dev/null)
	rmdir "$cg" 2> /dev/null
	read -r _ p1 c1 <<< "$(sed -n 1p <<< "$want")"
	read -r _ p3 c3 <<< "$(sed -n 3p <<< "$want")"
	if [ -z "$want" ]; then
		fail "$NAME" "the process wrote no truth: $(tail -2 "$TMP/$NAME.out" | tr '\n' '|')"
	elif [ "$got" != "$want" ]; then
		fail "$NAME" "the opens carry '$(tr '\n' '|' <<< "$got")', the process saw '$(tr '\n' '|' <<< "$want")' (name ppid cgroup)"
	elif [ "$p1" = "$p3" ] || [ "$c1" = "$c3" ]; then
		fail "$NAME" "the parent or the cgroup did not change ('$(tr '\n' '|' <<< "$want")'): nothing tested"
	else
		pass "$NAME (ppid $p1 then $p3, cgroup $c1 then $c3, in each open as the process saw them)"
	fi
fi

# ---- the whole call table: every call this architecture has, made once
# (tests/progs/every_call.c; each fails at once; between two marker
# calls: every_call.jq), recorded once each by
# name: the loader's numbers agree with the kernel's, and no call's
# decoding loses it. NAME, then env assignments for record.
every_call() {
	local n=$1
	shift
	if ! env "$@" "$IOTRAIL" record -v --layers syscall -o "$TMP/$n.trail" -- \
		"$PROGS/every_call" > "$TMP/$n.made" 2> "$TMP/$n.err"; then
		fail "$n" "record failed: $(tail -1 "$TMP/$n.err")"
		return
	elif compat_missing "$n" "$TMP/$n.err"; then
		fail "$n" "IOTRAIL_SYSCALL_COMPAT=1 did not load the compat programs: $(tail -1 "$TMP/$n.err")"
		return
	fi
	sort "$TMP/$n.made" > "$TMP/$n.want"
	"$IOTRAIL" report --json --events "$TMP/$n.trail" |
		jq -r -f tests/integration/every_call.jq | sort > "$TMP/$n.got"
	if [ "$(wc -l < "$TMP/$n.want")" -lt 40 ]; then
		fail "$n" "every_call made only $(wc -l < "$TMP/$n.want") calls"
	elif ! diff "$TMP/$n.want" "$TMP/$n.got" > "$TMP/$n.diff"; then
		fail "$n" "recorded calls differ from those made (< made, > recorded): $(grep '^[<>]' "$TMP/$n.diff" | head -6 | tr '\n' ' ')"
	else
		pass "$n ($(wc -l < "$TMP/$n.got") calls of the table, each made once and recorded once)"
	fi
}
every_call syscall_every_call
every_call syscall_compat_every_call IOTRAIL_SYSCALL_COMPAT=1

# ---- bad input: one line on stderr, non-zero exit
errs=0
expect_one_line() { # what: command...
	local what=$1; shift
	"$@" > /dev/null 2> "$TMP/err"; local rc=$?
	if [ $rc -eq 0 ] || [ $rc -ge 128 ] || [ "$(wc -l < "$TMP/err")" -ne 1 ] ||
	   ! grep -q '^iotrail' "$TMP/err"; then
		fail syscall_errors "$what: status $rc, stderr: $(head -3 "$TMP/err" | tr '\n' '|')"
		errs=1
	fi
}
GONE=$(bash -c 'echo $$') # a process that has exited (a killed `sleep &` races lib.sh's EXIT trap)
expect_one_line "unknown call" "$IOTRAIL" record --layers syscall --calls pread64,frobnicate -o "$TMP/x.trail" -d 1
expect_one_line "missing path" "$IOTRAIL" record --layers syscall --path "$TMP/no/such/dir" -o "$TMP/x.trail" -d 1
expect_one_line "gone pid" "$IOTRAIL" record --layers syscall -p "$GONE" -o "$TMP/x.trail" -d 1
expect_one_line "gone tid" "$IOTRAIL" record --layers syscall --tid "$GONE" -o "$TMP/x.trail" -d 1
expect_one_line "unknown layer" "$IOTRAIL" record --layers block,dns -o "$TMP/x.trail" -d 1
expect_one_line "layer recorded with another" "$IOTRAIL" record --layers nvmet -o "$TMP/x.trail" -d 1
expect_one_line "layer probed only" "$IOTRAIL" record --layers nvme-tcp -o "$TMP/x.trail" -d 1
expect_one_line "bad hook" "$IOTRAIL" record --syscall-hook kprobe -o "$TMP/x.trail" -d 1
expect_one_line "no syscall layer" "$IOTRAIL" record --layers block --calls fsync -o "$TMP/x.trail" -d 1
"$IOTRAIL" record --layers block -d 0.2 -o "$TMP/blockonly.trail" > /dev/null 2>&1
expect_one_line "log of a block-only trace" "$IOTRAIL" report --log "$TMP/blockonly.trail"
[ $errs -eq 0 ] && pass "syscall_errors (unknown call, missing path, gone pid/tid, bad layer/hook: one line each)"
exit ${FAILED:-0}
