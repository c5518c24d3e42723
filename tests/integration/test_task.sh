#!/usr/bin/env bash
# A profiling task (issue 14) against fio's counts. Three fio jobs of known
# counts on a loop device, one after the other: 4K reads (N1), 64K reads
# (N2), 8K writes (N3), each a fixed number_ios of psync direct I/O (one at
# a time: no merges, so fio's I/Os are the block layer's requests).
#   task_filter  a task file ([workload] op = read, size>= 32k; [report]
#                group-by = op,size), block and syscall layers: the
#                recording holds exactly N2 I/Os, every one a 64K read, and
#                exactly N2 system calls, pread64s each owning its I/O (no
#                pwrite64, no I/O no call owns); the kernel's counts: N2
#                passed, N1+N3 filtered out; the report says what was kept
#                and groups as the task says; the recorder's summary
#                says how many the predicate left out
#   task_filter_none  a predicate no I/O passes (op=read && op=write): the
#                summary counts all of fio's I/Os left out by it, the
#                "recorded nothing" warning names --filter, the report
#                says 0 of fio's total were kept and its warning names the
#                task
#   task_sample  --sample 1/10, block and syscall layers: the count is
#                inside the binomial 99.9% bounds of N1+N2+N3 trials, every
#                sampled I/O has its Q, D and C (no stage missing: each
#                stage's count == the I/Os) and its call (calls == I/Os,
#                each owning one, none unowned); kept + skipped == fio's total
#   task_epoch   --sample 5/10ms: no 10 ms epoch of the trace's Q times
#                holds more than 5 I/Os, some hold 5 (fio's psync I/Os
#                come faster than that), fewer than fio's total are kept,
#                every kept I/O has its Q, D and C; the kernel's kept ==
#                the trace's I/Os, kept + skipped == fio's total, and the
#                report's epochs == those of the trace's Q times
#   task_window  --start 2 s ahead, --stop 2 s later, beside a fio at 200
#                IOPS: no I/O recorded before the start or after the stop
#                (+0.2 s), at most 400 (+5%) in the 2 s, the report says
#                the window (skipped when loading the probes took it all)
#   task_memory  --memory 64k (on-full overwrite, no --flight): the file
#                keeps only the newest events, every I/O in it one of the
#                last job's 8K writes, and the report says how many events
#                were overwritten, as the recorder counted them
#   task_flight  --flight 1s over a 4 s run: the file spans the last second
#                only, and --trigger 'q2c>200ms' writes one file per
#                injected 300 ms stall of the device (slowfs stopped), each
#                holding its slow I/O
#   task_errors  bad options and task files: one line naming the key and
#                what is accepted, exit status 2, no trace file
#   task_uring   io_uring requests follow the decision: fio's io_uring 4K
#                reads (U1) and 64K reads (U2), QD 4, merges off, block and
#                syscall layers; --filter 'op=read && size>=32k': exactly U2
#                requests, each owning its one I/O, the kernel's counts U2
#                kept and U1 left out; --sample 1/10: requests == the
#                sampled I/Os, each owning its I/O, kept + left out == U1+U2;
#                fio's force_async requests: counted as handed to io-wq, none
#                recorded, their I/Os kept
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

N1=1000 N2=300 N3=500
why=$(host_blocker)
if [ -n "$why" ]; then
	for s in task_filter task_sample task_epoch task_memory task_window task_flight task_errors \
		task_uring; do
		skip "$s" "$why"
	done
	exit 0
fi

# the three jobs, as one COMMAND for the recorder
cat > "$TMP/jobs.sh" <<JOBS
#!/bin/sh
job() { fio --name=\$1 --filename=\$LOOPDEV --direct=1 --ioengine=psync --rw=\$2 --bs=\$3 \\
	--number_ios=\$4 --size=64M --output-format=json --output=$TMP/\$1.json > /dev/null; }
job r4 randread 4k $N1 && job r64 randread 64k $N2 && job w8 randwrite 8k $N3
JOBS
chmod +x "$TMP/jobs.sh"

fio_total() { # the jobs' total_ios, as fio counted them
	local t=0 j
	for j in r4 r64 w8; do
		t=$((t + $(jq '.jobs[0].read.total_ios + .jobs[0].write.total_ios' "$TMP/$j.json")))
	done
	echo $t
}

record() { # name [record options]; LAYERS: block unless set
	local name=$1; shift
	rm -f "$TMP"/r4.json "$TMP"/r64.json "$TMP"/w8.json
	LOOPDEV=$LOOPDEV "$IOTRAIL" record -o "$TMP/$name.trail" --layers "${LAYERS:-block}" --dev "$LOOPNAME" \
		"$@" -- "$TMP/jobs.sh" > "$TMP/$name.out" 2>&1
}

make_loop 128 none || { fail task_filter "cannot set up a loop device"; exit 1; }

# ---- the filter, from a task file ----
cat > "$TMP/big-reads.task" <<'TASK'
; 64K reads only
[workload]
op = read
size>= 32k
[report]
group-by = op,size
TASK
# the calls and the I/Os of a recording with both layers: "I/Os calls
# owning-calls owned-I/Os unowned-I/Os pwrites", from its JSON report
calls_of() {
	jq -r '[([.groups[].count] | add // 0),
		([.syscalls[] | select(.name == "pread64" or .name == "pwrite64") | .count] | add // 0),
		([.syscalls[].block.calls] | add // 0), ([.syscalls[].block.ios] | add // 0),
		.syscall_block.background_ios,
		([.syscalls[] | select(.name == "pwrite64") | .count] | add // 0)] | @tsv' "$1"
}

# with the syscall layer: only the calls that queued a kept I/O
if ! LAYERS=block,syscall record filter --task "$TMP/big-reads.task"; then
	fail task_filter "record failed: $(tail -1 "$TMP/filter.out")"
elif [ "$(fio_total)" != $((N1 + N2 + N3)) ]; then
	fail task_filter "fio did $(fio_total) I/Os, asked for $((N1 + N2 + N3))"
else
	"$IOTRAIL" report --json "$TMP/filter.trail" > "$TMP/filter.json"
	"$IOTRAIL" report "$TMP/filter.trail" > "$TMP/filter.txt"
	total=$(jq '[.groups[].count] | add // 0' "$TMP/filter.json")
	others=$(jq '[.groups[] | select(.key.op != "read" or .key.size != 65536) | .count] | add // 0' \
		"$TMP/filter.json")
	keys=$(jq -c '.group_by' "$TMP/filter.json")
	line=$(grep -A3 '^task ' "$TMP/filter.txt" | grep -v '^[a-z]' | tr -s ' \n' ' ')
	line="$(grep '^task ' "$TMP/filter.txt" | tr -s ' ' ' ')$line"
	read -r ios calls owners owned unowned pwrites < <(calls_of "$TMP/filter.json")
	counts=$(jq -r '.task | "\(.ios_passed) \(.ios_filtered_out) \(.calls_kept) \(.syscalls_unfiltered)"' \
		"$TMP/filter.json")
	if [ "$total" != "$N2" ] || [ "$others" != 0 ]; then
		fail task_filter "recorded $total I/Os ($others not 64K reads); fio did $N2 64K reads"
	elif [ "$keys" != '["op","size"]' ]; then
		fail task_filter "the report grouped by $keys, the task file says op,size"
	elif [[ "$line" != *"only I/Os with op=read && size>=32k: $N2 of $((N1 + N2 + N3)), $((N1 + N3)) filtered out"* ]]; then
		fail task_filter "the report's task line is '$line'"
	elif [ "$calls" != "$N2" ] || [ "$owners" != "$N2" ] || [ "$owned" != "$N2" ] ||
	     [ "$unowned" != 0 ] || [ "$pwrites" != 0 ]; then
		fail task_filter "$calls pread64/pwrite64 calls ($pwrites pwrite64), $owners owning $owned I/Os, $unowned I/Os no call owns; fio did $N2 64K reads"
	elif [ "$counts" != "$N2 $((N1 + N3)) $N2 false" ] ||
	     [[ "$line" != *"system calls: only those that queued a kept I/O, $N2;"* ]]; then
		fail task_filter "the kernel's counts (passed, filtered out, calls kept, unfiltered) are '$counts', want '$N2 $((N1 + N3)) $N2 false'; task line '$line'"
	elif ! grep -q "$N2 I/Os, .* (left out in the kernel: $((N1 + N3)) by the predicate, 0 by the sampling)" \
		"$TMP/filter.out"; then
		fail task_filter "the recorder's summary does not say the $((N1 + N3)) left out: $(grep 'iotrail record:' "$TMP/filter.out" | tail -1)"
	else
		pass "task_filter ($total I/Os == fio's $N2 64K reads, none of its $N1 4K reads and $N3 8K writes; $calls calls, each owning its I/O; $line)"
	fi
fi

# ---- a predicate no I/O passes: said by the recorder, named as the cause ----
if ! record none --filter 'op=read && op=write'; then
	fail task_filter_none "record failed: $(tail -1 "$TMP/none.out")"
else
	want=$(fio_total)
	if ! grep -q "0 I/Os, 0 events, 0 dropped (left out in the kernel: $want by the predicate, 0 by the sampling)" \
		"$TMP/none.out"; then
		fail task_filter_none "the summary does not say fio's $want I/Os were left out: $(grep 'iotrail record:' "$TMP/none.out" | tr '\n' ' ')"
	elif ! grep -q "warning: the block layer recorded nothing while its devices completed .* the scope (--filter) may leave them out" \
		"$TMP/none.out"; then
		fail task_filter_none "the warning does not name --filter: $(grep warning "$TMP/none.out")"
	elif ! "$IOTRAIL" report "$TMP/none.trail" | grep -q "only I/Os with op=read && op=write: 0 of $want, $want filtered out"; then
		fail task_filter_none "the report's task line is '$("$IOTRAIL" report "$TMP/none.trail" | grep -A2 '^task')'"
	elif ! "$IOTRAIL" report "$TMP/none.trail" | grep -q "^\*\*\* The task (its line above) keeps only the I/O it selects"; then
		fail task_filter_none "the report's warning does not name the task: $("$IOTRAIL" report "$TMP/none.trail" | grep '^\*\*\*' | tr '\n' ' ')"
	else
		pass "task_filter_none (0 of fio's $want I/Os kept, all counted as left out by the predicate; the warning names --filter)"
	fi
fi

# ---- 1 in 10 ----
if ! LAYERS=block,syscall record sample --sample 1/10; then
	fail task_sample "record failed: $(tail -1 "$TMP/sample.out")"
else
	n=$(fio_total)
	"$IOTRAIL" report --json "$TMP/sample.trail" > "$TMP/sample.json"
	got=$(jq '[.groups[].count] | add // 0' "$TMP/sample.json")
	# the count of n Bernoulli(1/10) trials: mean n/10, 99.9% two-sided
	# normal bounds (z = 3.29), good at these n
	read -r lo hi < <(awk -v n="$n" 'BEGIN { m = n / 10; s = sqrt(n * 0.1 * 0.9);
		printf "%d %d\n", m - 3.29 * s, m + 3.29 * s + 1 }')
	# no sampled I/O misses a stage: Q2D, D2C and Q2C each counted for all
	short=$(jq '[.groups[] | .count as $c | .stages[] | select(.count != $c)] | length' \
		"$TMP/sample.json")
	noq=$(jq '.stitch.no_q + .stitch.incomplete.queued + .stitch.incomplete.issued' "$TMP/sample.json")
	read -r ios calls owners owned unowned pwrites < <(calls_of "$TMP/sample.json")
	counts=$(jq -r '.task | "\(.ios_passed) \(.ios_kept) \(.ios_skipped)"' "$TMP/sample.json")
	if [ "$got" -lt "$lo" ] || [ "$got" -gt "$hi" ]; then
		fail task_sample "$got I/Os of $n sampled 1 in 10: outside [$lo, $hi]"
	elif [ "$short" != 0 ] || [ "$noq" != 0 ]; then
		fail task_sample "$short stages short of their group's count, $noq I/Os without Q or unfinished"
	elif [ "$calls" != "$got" ] || [ "$owners" != "$got" ] || [ "$owned" != "$got" ] ||
	     [ "$unowned" != 0 ]; then
		fail task_sample "$got sampled I/Os, $calls pread64/pwrite64 calls, $owners owning $owned I/Os, $unowned no call owns: want each sampled I/O with its call"
	elif [ "$counts" != "$n $got $((n - got))" ]; then
		fail task_sample "the kernel's counts (passed, kept, skipped) are '$counts', want '$n $got $((n - got))'"
	elif ! "$IOTRAIL" report "$TMP/sample.trail" | grep -q "^task      sampled 1 in 10: $got kept of $n, $((n - got)) skipped: counts are of"; then
		fail task_sample "the report does not say the counts are of sampled I/Os, with the totals"
	else
		pass "task_sample ($got of $n I/Os, within the 99.9% bounds [$lo, $hi]; every one with Q, D, C and its call; kept + skipped == fio's total)"
	fi
fi

# ---- the first 20 of every 100 ms ----
if ! record epoch --sample 5/10ms; then
	fail task_epoch "record failed: $(tail -1 "$TMP/epoch.out")"
else
	n=$(fio_total)
	"$IOTRAIL" report --json "$TMP/epoch.trail" > "$TMP/epoch.json"
	got=$(jq '[.groups[].count] | add // 0' "$TMP/epoch.json")
	short=$(jq '[.groups[] | .count as $c | .stages[] | select(.count != $c)] | length' \
		"$TMP/epoch.json")
	# per epoch: the Q times (CLOCK_MONOTONIC, the kernel's epoch clock)
	read -r epochs full most < <("$IOTRAIL" export --format csv --what trails "$TMP/epoch.trail" |
		awk -F, 'NR > 1 { c[int($9 / 10000000)]++ }
			END { for (e in c) { n++; if (c[e] == 5) f++; if (c[e] > m) m = c[e] }
			      print n + 0, f + 0, m + 0 }')
	line=$("$IOTRAIL" report "$TMP/epoch.trail" | grep -A1 '^task ' | tr -s ' \n' ' ')
	counts=$(jq -r '.task | "\(.ios_passed) \(.ios_kept) \(.ios_skipped) \(.epochs)"' "$TMP/epoch.json")
	if [ "$counts" != "$n $got $((n - got)) $epochs" ]; then
		fail task_epoch "the kernel's counts (passed, kept, skipped) and the report's epochs are '$counts', want '$n $got $((n - got)) $epochs' (fio's total, the trace's I/Os, its epochs)"
	elif [ "$most" -gt 5 ] || [ "$full" -lt 1 ]; then
		fail task_epoch "the busiest of $epochs epochs kept $most I/Os, $full kept 5: want at most 5, and some at 5"
	elif [ "$got" -ge "$n" ] || [ "$got" -gt $((epochs * 5)) ]; then
		fail task_epoch "kept $got of fio's $n I/Os in $epochs epochs of at most 5"
	elif [ "$short" != 0 ]; then
		fail task_epoch "$short stages short of their group's count"
	elif [[ "$line" != *"sampled the first 5 I/Os of every 10ms epoch, none after them: $got kept of $n, $((n - got)) skipped"* ]]; then
		fail task_epoch "the report's task line is '$line'"
	else
		pass "task_epoch ($got of fio's $n I/Os in $epochs epochs: at most $most each, $full at 5; $((n - got)) skipped, as the kernel counted)"
	fi
fi

# ---- a memory bound that overwrites: the newest events only ----
if ! record memory --memory 64k; then
	fail task_memory "record failed: $(tail -1 "$TMP/memory.out")"
else
	"$IOTRAIL" report --json "$TMP/memory.trail" > "$TMP/memory.json"
	got=$(jq '[.groups[].count] | add // 0' "$TMP/memory.json")
	others=$(jq '[.groups[] | select(.key.op != "write") | .count] | add // 0' "$TMP/memory.json")
	said=$(jq '.task.overwritten' "$TMP/memory.json")
	counted=$(sed -n 's/.*; \([0-9]*\) events of windows so far left early.*/\1/p' "$TMP/memory.out")
	line=$("$IOTRAIL" report "$TMP/memory.trail" | grep -A1 '^task ' | tr -s ' \n' ' ')
	if [ "$got" -lt 100 ] || [ "$got" -gt "$N3" ] || [ "$others" != 0 ]; then
		fail task_memory "the file holds $got I/Os, $others of them not the last job's 8K writes ($N3 of them)"
	elif [ -z "$counted" ] || [ "$said" != "$counted" ]; then
		fail task_memory "the report says $said overwritten, the recorder ${counted:-nothing}: $(grep flight: "$TMP/memory.out")"
	elif [[ "$line" != *"$said events overwritten before this file was written (memory 64k"* ]]; then
		fail task_memory "the report's task line is '$line'"
	else
		pass "task_memory ($got I/Os kept, all of the last job's 8K writes; $said events overwritten, said in the report)"
	fi
fi

# ---- a window of dates: start 2 s ahead, stop 2 s later ----
window_test() {
	local t0 start stop from to fpid rc
	t0=$(date +%s)
	start=$(date -d "@$((t0 + 2))" '+%F %T')
	stop=$(date -d "@$((t0 + 4))" '+%F %T')
	# fio until just past the stop
	fio --name=bg --filename="$LOOPDEV" --direct=1 --ioengine=psync --rw=randread --bs=4k \
		--time_based --runtime=$(( (t0 + 4) * 1000 + 100 - $(date +%s%3N) ))ms --rate_iops=200 \
		--output=/dev/null > /dev/null 2>&1 &
	fpid=$!
	"$IOTRAIL" record -o "$TMP/window.trail" --layers block --dev "$LOOPNAME" --start "$start" \
		--stop "$stop" > "$TMP/window.out" 2>&1
	rc=$?
	wait $fpid
	[ $rc = 0 ] || { fail task_window "record failed: $(tail -1 "$TMP/window.out")"; return; }
	"$IOTRAIL" report --json "$TMP/window.trail" > "$TMP/window.json"
	# the Q times on the wall clock, by the head's pair of clocks (an I/O
	# in flight when the probes attached has no Q: not counted; once it
	# read as queued at boot)
	read -r n from to < <("$IOTRAIL" export --format csv --what trails "$TMP/window.trail" |
		awk -F, -v rt="$(jq '.host.start_realtime_ns' "$TMP/window.json")" \
			-v mono="$(jq '.host.start_monotonic_ns' "$TMP/window.json")" '
			NR > 1 && $9 > 0 { t = (rt + ($9 - mono)) / 1e9; if (!n++ || t < lo) lo = t; if (t > hi) hi = t }
			END { printf "%d %.3f %.3f\n", n, lo, hi }')
	# the probes load before the start date and attach at it; loading
	# longer than the 2 s ahead (a busy machine) shortens the window:
	# never early, never late
	if grep -q 'were ready .* after --stop' "$TMP/window.out"; then
		skip task_window "the probes took the whole 2 s window to load (a busy machine): $(grep warning: "$TMP/window.out")"
	elif [ "$n" -lt 1 ] || [ "$n" -gt 420 ]; then
		fail task_window "$n I/Os (queued from $from to $to) in the window $((t0 + 2)) .. $((t0 + 4)) beside fio at 200 IOPS: $(tr '\n' ' ' < "$TMP/window.out")"
	elif awk -v f="$from" -v t="$to" -v a=$((t0 + 2)) -v b=$((t0 + 4)) \
		'BEGIN { exit !(f < a || t > b + 0.2) }'; then
		fail task_window "I/Os from $from to $to, the window is $((t0 + 2)) to $((t0 + 4))"
	elif ! "$IOTRAIL" report "$TMP/window.trail" | grep -qF "window $start to $stop (local time)"; then
		fail task_window "the report does not state the window: $("$IOTRAIL" report "$TMP/window.trail" | grep '^task')"
	else
		pass "task_window ($n I/Os, queued from $from to $to, inside $((t0 + 2)) .. $((t0 + 4)))"
	fi
}
# ---- io_uring requests follow the I/Os' decisions ----
U1=400 U2=200
cat > "$TMP/ujobs.sh" <<JOBS
#!/bin/sh
exec fio --filename=\$LOOPDEV --direct=1 --ioengine=io_uring --iodepth=4 --rw=randread \\
	--size=64M --output-format=json --output=$TMP/u.json --name=u4 --bs=4k --number_ios=$U1 \\
	--name=u64 --stonewall --bs=64k --number_ios=$U2 > /dev/null
JOBS
chmod +x "$TMP/ujobs.sh"
# "requests I/Os kept not-kept+no-io+async" from a recording's JSON report
uring_of() {
	jq -r '[([.syscalls[] | select(.name | startswith("uring_")) | .count] | add // 0),
		([.groups[].count] | add // 0), .task.uring_kept,
		(.task.uring_not_kept + .task.uring_no_io + .task.uring_async)] | @tsv' "$1"
}
# The requests that own an I/O of their own (the report gives a thread's
# I/Os to its io_uring_enter, not to the requests): one request and one
# trail of the same thread, sector (offset / 512) and size, the trail
# queued between the request's submission and completion
uring_owning() {
	{ "$IOTRAIL" report --json --events "$1" | jq -r '.events[] |
		select(.call | startswith("uring_")) |
		"R \(.tid) \(.offset / 512 | floor) \(.count) \(.ts_ns) \(.exit_ns)"'
	  "$IOTRAIL" export --format csv --what trails "$1" | awk -F, 'NR > 1 { print "T", $7, $4, $5, $9 }'
	} | awk '{ k = $2 " " $3 " " $4 }
		$1 == "R" { rn[k]++; lo[k] = $5; hi[k] = $6; next }
		{ tn[k]++; q[k] = $5 }
		END { for (k in rn) n += rn[k] == 1 && tn[k] == 1 && q[k] >= lo[k] && q[k] <= hi[k]
		      print n + 0 }'
}
uring_test() { # name record-options...
	local name=$1; shift
	rm -f "$TMP"/u.json
	LOOPDEV=$LOOPDEV "$IOTRAIL" record -o "$TMP/$name.trail" --layers block,syscall \
		--dev "$LOOPNAME" "$@" -- "$TMP/ujobs.sh" > "$TMP/$name.out" 2>&1 || return 1
	"$IOTRAIL" report --json "$TMP/$name.trail" > "$TMP/$name.json"
}
# one bio per request: random reads at QD 4 could meet in a plug
echo 2 > "/sys/block/$LOOPNAME/queue/nomerges"
if ! uring_test ufilter --filter 'op=read && size>=32k'; then
	fail task_uring "record failed: $(tail -1 "$TMP/ufilter.out")"
else
	want=$(jq '.jobs[] | select(.jobname == "u64") | .read.total_ios' "$TMP/u.json")
	read -r reqs ios kept left < <(uring_of "$TMP/ufilter.json")
	owning=$(uring_owning "$TMP/ufilter.trail")
	line=$("$IOTRAIL" report "$TMP/ufilter.trail" | grep -A6 '^task ' | tr -s ' \n' ' ')
	if [ "$want" != "$U2" ]; then
		fail task_uring "fio did $want 64K reads, asked for $U2"
	elif [ "$reqs" != "$U2" ] || [ "$owning" != "$U2" ] || [ "$ios" != "$U2" ]; then
		fail task_uring "--filter: $reqs io_uring requests, $owning owning an I/O of their own, $ios I/Os; fio did $U2 64K reads (and $U1 4K ones)"
	elif [ "$kept" != "$U2" ] || [ "$left" != "$U1" ]; then
		fail task_uring "--filter: the kernel counted $kept requests kept, $left left out; want $U2 and $U1"
	elif [[ "$line" != *"io_uring requests: only those that queued a kept I/O at submission, $U2;"* ]]; then
		fail task_uring "the report's task line is '$line'"
	elif ! uring_test usample --sample 1/10; then
		fail task_uring "record failed: $(tail -1 "$TMP/usample.out")"
	else
		read -r reqs ios kept left < <(uring_of "$TMP/usample.json")
		owning=$(uring_owning "$TMP/usample.trail")
		# every request handed to io-wq (fio's force_async): counted apart
		LOOPDEV=$LOOPDEV "$IOTRAIL" record -o "$TMP/uasync.trail" --layers block,syscall \
			--dev "$LOOPNAME" --filter 'op=read && size>=32k' -- fio --name=a \
			--filename="$LOOPDEV" --direct=1 --ioengine=io_uring --force_async=1 \
			--iodepth=4 --rw=randread --bs=64k --number_ios=50 --size=64M \
			--output=/dev/null > "$TMP/uasync.out" 2>&1
		"$IOTRAIL" report --json "$TMP/uasync.trail" > "$TMP/uasync.json" 2>&1
		read -r areqs aios akept aleft < <(uring_of "$TMP/uasync.json")
		async=$(jq '.task.uring_async' "$TMP/uasync.json")
		if [ "$ios" -lt 1 ] || [ "$reqs" != "$ios" ] || [ "$owning" != "$ios" ] ||
		   [ "$kept" != "$ios" ] || [ $((kept + left)) != $((U1 + U2)) ]; then
			fail task_uring "--sample 1/10: $reqs io_uring requests, $owning owning an I/O of their own, $ios sampled I/Os; the kernel: $kept kept, $left left out of fio's $((U1 + U2))"
		elif [ "$areqs" != 0 ] || [ "$aios" != 50 ] || [ "$akept" != 0 ] || [ "$async" != 50 ]; then
			fail task_uring "force_async: $areqs requests recorded, $aios I/Os, $akept kept, $async counted as handed to io-wq; want 0, 50 (fio's), 0, 50"
		else
			pass "task_uring (--filter: $U2 requests == fio's 64K reads, each owning its I/O, its $U1 4K ones left out; --sample 1/10: $reqs requests == the $ios sampled I/Os, each owning its I/O, $left left out; fio's 50 force_async requests counted as handed to io-wq, none recorded, their 50 I/Os kept)"
		fi
	fi
fi
echo 0 > "/sys/block/$LOOPNAME/queue/nomerges"

window_test
drop_loop

# ---- the flight recorder: the last window only; a trigger per spike ----
# A loop device over slowfs (a FUSE file, 50 us a request): stopping the
# FUSE daemon (SIGSTOP) for 300 ms stalls the device, a spike of one slow
# I/O per stall (psync, one at a time), twice, 1.5 s apart.
flight_test() {
	local why reads=0 base i
	why=$(slow_loop_blocker)
	[ -z "$why" ] || { skip task_flight "$why"; return; }
	make_slow_loop 50 64 none || { fail task_flight "cannot set up a loop device over slowfs"; return; }
	rm -f "$TMP"/flight.trail*
	base=$(awk '{ print $1 }' "/sys/block/$LOOPNAME/stat")
	"$IOTRAIL" record -o "$TMP/flight.trail" --dev "$LOOPNAME" --flight 1s --trigger 'q2c>200ms' \
		-- fio --name=f --filename="$LOOPDEV" --direct=1 --ioengine=psync --rw=randread --bs=4k \
		--time_based --runtime=4 --rate_iops=300 --output=/dev/null > "$TMP/flight.out" 2>&1 &
	local rec=$!
	for i in $(seq 100); do # until fio's reads reach the device (traced then)
		reads=$(awk '{ print $1 }' "/sys/block/$LOOPNAME/stat")
		[ "$reads" -gt $((base + 50)) ] && break
		sleep 0.05
	done
	for i in 1 2; do
		sleep 0.5
		kill -STOP "$SLOWFS_PID"; sleep 0.3; kill -CONT "$SLOWFS_PID"
		sleep 1
	done
	wait $rec || { fail task_flight "record failed: $(tail -1 "$TMP/flight.out")"; drop_slow_loop; return; }
	drop_slow_loop
	local fires total dur count maxes=""
	fires=$(ls "$TMP"/flight.trail.* 2>/dev/null | wc -l)
	total=$(sed -n 's/^iotrail record: \([0-9]*\) I\/Os.*/\1/p' "$TMP/flight.out")
	"$IOTRAIL" report --json "$TMP/flight.trail" > "$TMP/flight.json"
	dur=$(jq '.duration_s' "$TMP/flight.json")
	count=$(jq '[.groups[].count] | add // 0' "$TMP/flight.json")
	for i in $(seq "$fires"); do
		maxes="$maxes $("$IOTRAIL" report --json "$TMP/flight.trail.$i" | jq '[.groups[].latency_ns.max] | max')"
	done
	if [ "$fires" != 2 ]; then
		fail task_flight "the trigger wrote $fires files for 2 spikes: $(grep flight: "$TMP/flight.out" | tr '\n' ' ')"
	elif ! awk -v m="$maxes" 'BEGIN { n = split(m, a, " "); for (i = 1; i <= n; i++) if (a[i] < 200e6) exit 1 }'; then
		fail task_flight "a trigger's file lacks its slow I/O (max Q2C:$maxes ns)"
	elif ! awk -v d="$dur" 'BEGIN { exit !(d > 0.5 && d <= 1.0) }' || [ "$count" -gt 400 ] ||
	     [ "$count" -lt 100 ] || [ "$total" -lt $((count * 2)) ]; then
		fail task_flight "the file spans $dur s with $count of the $total I/Os at 300 IOPS; want the last 1 s only"
	else
		pass "task_flight (the file holds the last $dur s: $count of the $total I/Os; 2 spikes, 2 trigger files, max Q2C$maxes ns)"
	fi
}
flight_test

# ---- bad input: one line, the key named, exit 2, no file ----
errs=0
bad() { # what-the-line-must-say [record options]
	local want=$1; shift
	rm -f "$TMP/bad.trail"
	"$IOTRAIL" record -o "$TMP/bad.trail" -d 1 "$@" > "$TMP/bad.out" 2>&1
	local rc=$? lines
	lines=$(wc -l < "$TMP/bad.out")
	if [ $rc != 2 ] || [ "$lines" != 1 ] || ! grep -qF -- "$want" "$TMP/bad.out" || [ -e "$TMP/bad.trail" ]; then
		echo "  record $*: exit $rc, $lines lines: $(head -2 "$TMP/bad.out")" >&2
		errs=$((errs + 1))
	fi
}
printf '[workload]\ncolour = red\n' > "$TMP/bad1.task"
printf '[profiler]\nsample = 1/0\n' > "$TMP/bad2.task"
printf '[report]\nformat = xml\n' > "$TMP/bad3.task"
printf '[workload]\nop = read\n[profiler]\nsample = 1/5\n' > "$TMP/ok.task"
bad "filter term 'op=reed': op is one of read, write" --filter 'op=reed'
bad "filter term 'size>=32q'" --filter 'size>=32q'
bad "join them with && only" --filter 'comm=fio || op=read'
bad "sample '1/0': give 1/N" --sample 1/0
bad "line 2: [workload] colour: unknown key" --task "$TMP/bad1.task"
bad "line 2: [profiler] sample: sample '1/0'" --task "$TMP/bad2.task"
bad "line 2: [report] format: 'xml': give text or json" --task "$TMP/bad3.task"
bad "failed to read the task file $TMP/none.task" --task "$TMP/none.task"
# the command line wins over the file: its bad sample is the one refused
bad "sample 'x'" --task "$TMP/ok.task" --sample x
bad "sample '0/1s': give N/EPOCH" --sample 0/1s
bad "failed to parse --start: date '2026-13-01 00:00:00': give YYYY-MM-DD hh:mm:ss" \
	--start '2026-13-01 00:00:00'
bad "failed to apply --start 2020-01-01 00:00:00: it is past" --start '2020-01-01 00:00:00'
bad "it is not after --start" --start "$(date -d '+1 hour' '+%F %T')" --stop "$(date -d '+30 min' '+%F %T')"
bad "failed to apply --on-full: it says what happens when --memory is full" --on-full overwrite
bad "failed to parse --on-full drop: give overwrite" --memory 64m --on-full drop
bad "failed to apply --on-full write-out with --flight" --memory 64m --on-full write-out --flight 1s
printf '[report]\nstats = p50,mode\n' > "$TMP/bad4.task"
bad "line 2: [report] stats: stats 'p50,mode': give a comma-separated list" --task "$TMP/bad4.task"
if [ $errs = 0 ]; then
	pass "task_errors (17 bad filters, samples, dates, memory policies and task files: one line each, naming the key, exit 2)"
else
	fail task_errors "$errs of 17 bad inputs were not refused with one line naming the key"
fi
exit ${FAILED:-0}
