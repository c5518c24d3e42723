#!/usr/bin/env bash
# CPU time of the BPF programs per I/O, the steady measure on a noisy shared
# machine (IOPS ratios swing by +-40% between runs; a program's run time
# hardly does): fio 4K random reads, io_uring, QD 8 and 32 (QDS="8 32"),
# on a loop device over a tmpfs file, under
#   floor:    bench/hook_floor 1 (one minimal 64-byte record at Q, D, C)
#   empty:    bench/hook_floor 0 (programs that return at once on Q, D, C)
#   clockfloor: bench/hook_floor 9 (programs on Q, D, C that read the clock
#             once each and do nothing else: the least a tracer that
#             times each of the three events pays)
#   eventclock: bench/hook_floor 11 (every event the default times for an
#             I/O of fio, seven with io_uring: Q, D, C, the entry and exit
#             of its I/O calls, an io_uring request's submission and
#             completion, each reading the clock once and nothing else:
#             the least any tracer that times what the default times pays)
#   floorcpu: bench/hook_floor 4 (the same into a ring per CPU, as
#             iotrail's rings are)
#   floorspsc: floorcpu's records into a buffer per CPU and hook, one
#             producer and one consumer, no lock (bench/hook_floor 7): what
#             a record costs without the BPF ring buffer's reserve/commit
#   sysempty: floorcpu plus empty programs on the default's system-call
#             hooks (bench/hook_floor 5)
#   sysfloor: floorcpu plus a record where the default writes one for a
#             call (bench/hook_floor 6; bench/overhead.sh says more)
#   block:    iotrail record --layers block --dev DEV
#   default:  iotrail record -- (every layer, every device and process)
#   baseline: the default recording with BASELINE=path/to/another/iotrail
#   reject:   `iotrail record --layers block --dev DEV --filter` with a
#             predicate no I/O passes: what an I/O a task filters out costs
#   baseline-reject, baseline-block: reject, block with BASELINE's build
#   sample100, baseline-sample100: `--sample 1/100` instead of the filter
#   usample10, ureject (and baseline-usample10, baseline-ureject): the same
#             two with the syscall layer too (--layers block,syscall --comm
#             fio): what the io_uring requests' following costs (uring_*
#             programs' ns per run, and the total per I/O)
#   CONFIGS="floor reject baseline-reject" picks (floor first); default
#   "floor block default", and baseline when BASELINE is set
# ROUNDS rounds, alternating order. With kernel.bpf_stats_enabled=1 (on
# for the run, restored after), each program's run_time_ns / run_cnt is
# read (bpftool prog show) just before fio's tracer exits; printed per
# program (ns per run, and runs per completed I/O of fio: the default
# recording traces every process's system calls, so other work on the
# machine shows there) and, summed over the programs the tracer loaded,
# per completed I/O of fio. The stats add two clock reads to every run, to every
# configuration alike. Each round also prints default / floor and
# block / floor of the BPF time per I/O, and the end their medians per
# queue depth (the goal: default <= floor in BPF time is the same as
# default >= floor in IOPS, where the BPF time is what differs).
# Beside it, the tracer's own CPU time over fio's run (its threads'
# schedstat: draining the rings, packing, compressing, writing), per I/O,
# and the two summed: what tracing costs the machine's CPUs per I/O,
# kernel and user side, in one steady figure.
# Only the tracer's own programs count (the prog_id of
# each BPF program fd the tracer holds, from /proc/PID/fdinfo), so programs
# that others load on a shared machine are left out; their runs still share
# the CPUs, which is why the time per run, not IOPS, is the figure here.
#   bench/bpf_cost.sh [ROUNDS] [SECONDS]       (defaults: 3 rounds, 4 s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-4}
[ "$(id -u)" -eq 0 ] || { echo "bpf_cost: needs root" >&2; exit 1; }
baseline=${BASELINE:-}
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "bpf_cost: BASELINE=$baseline is not an executable" >&2; exit 1; }

. bench/lib.sh bpfcost
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; cleanup' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

read -r -a configs <<< "${CONFIGS:-floor block default}"
[ -n "${CONFIGS:-}" ] || [ -z "$baseline" ] || configs+=(baseline)
[ "${configs[0]}" = floor ] || { echo "bpf_cost: CONFIGS must start with floor" >&2; exit 1; }
case " ${configs[*]} " in
*" baseline"*) [ -n "$baseline" ] || { echo "bpf_cost: a baseline configuration needs BASELINE=path/to/iotrail" >&2; exit 1; } ;;
esac

# The CPU time (ns) of process $1's threads so far: the tracer's own work
# in user space and the system calls it makes (draining, writing), which
# the BPF run time leaves out.
cat > "$out/cpu.sh" <<'EOF2'
cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
EOF2

# fio under configuration $1; bpftool's view of the programs just before
# fio's tracer exits in $out/progs, fio's results in $out/fio.json, the
# tracer's CPU time over fio's run in $out/cpu
run_config() {
	local inner="c0=\$(bash $out/cpu.sh \$PPID); \
fio --name=bench --filename=$dev --rw=randread --bs=4k --direct=1 \
--ioengine=io_uring --iodepth=$qd --time_based --runtime=$secs --size=512M \
--output-format=json --output=$out/fio.json; \
echo \$(( \$(bash $out/cpu.sh \$PPID) - c0 )) > $out/cpu; bpftool prog show > $out/progs; \
grep -h '^prog_id:' /proc/\$PPID/fdinfo/* | awk '{ print \$2 }' | sort -u > $out/ours"
	local pre
	case $1 in
	floor) pre=(build/bench/hook_floor 1 --) ;;
	empty) pre=(build/bench/hook_floor 0 --) ;;
	clockfloor) pre=(build/bench/hook_floor 9 --) ;;
	eventclock) pre=(build/bench/hook_floor 11 --) ;;
	floorcpu) pre=(build/bench/hook_floor 4 --) ;;
	floorspsc) pre=(build/bench/hook_floor 7 --) ;;
	sysempty) pre=(build/bench/hook_floor 5 --) ;;
	sysfloor) pre=(build/bench/hook_floor 6 --) ;;
	block) pre=(build/iotrail record -o "$out/t.trail" --layers block --dev "$dev" --) ;;
	default) pre=(build/iotrail record -o "$out/t.trail" --) ;;
	baseline) pre=("$baseline" record -o "$out/t.trail" --) ;;
	baseline-block) pre=("$baseline" record -o "$out/t.trail" --layers block --dev "$dev" --) ;;
	reject) pre=(build/iotrail record -o "$out/t.trail" --layers block --dev "$dev" \
		--filter 'op=read && op=write' --) ;;
	baseline-reject) pre=("$baseline" record -o "$out/t.trail" --layers block --dev "$dev" \
		--filter 'op=read && op=write' --) ;;
	sample100) pre=(build/iotrail record -o "$out/t.trail" --layers block --dev "$dev" \
		--sample 1/100 --) ;;
	baseline-sample100) pre=("$baseline" record -o "$out/t.trail" --layers block --dev "$dev" \
		--sample 1/100 --) ;;
	usample10|ureject|baseline-usample10|baseline-ureject)
		local bin=build/iotrail what=(--sample 1/10)
		[[ $1 != baseline-* ]] || bin=$baseline
		[[ $1 != *ureject ]] || what=(--filter 'op=read && op=write')
		pre=("$bin" record -o "$out/t.trail" --layers block,syscall --dev "$dev" --comm fio \
			"${what[@]}" --) ;;
	*) echo "bpf_cost: unknown configuration $1" >&2; exit 1 ;;
	esac
	"${pre[@]}" bash -c "$inner" > "$out/run.log" 2>&1
}

# per program of the tracer's: "name ns_per_run runs", then the total
programs() {
	[ -s "$out/ours" ] || { echo "bpf_cost: found no BPF program fd in the tracer's fdinfo" >&2; exit 1; }
	awk 'FILENAME == ARGV[1] { ours[$1] = 1; next }
	     /^[0-9]+:/ { id = $1; sub(":", "", id); if (!(id in ours)) next
		for (i = 1; i <= NF; i++) {
			if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") t = $(i + 1)
			if ($i == "run_cnt") c = $(i + 1)
		}
		if (c > 0) { printf "%s %.0f %d\n", n, t / c, c; total += t }
		t = c = 0 }
	     END { printf "TOTAL %.0f\n", total }' "$out/ours" "$out/progs"
}

echo "BPF programs' run time: fio randread 4K io_uring on $dev (loop over tmpfs), ${secs}s runs"
for qd in ${QDS:-32}; do
	rm -f "$out"/*.perio "$out"/*.over "$out"/*.cpuio "$out"/*.allio
	for i in $(seq 1 "$rounds"); do
		for c in $(round_order "$i" "${configs[@]}"); do
			run_config "$c"
			ios=$(jq -r '.jobs[0].read.total_ios' "$out/fio.json")
			programs > "$out/p"
			total=$(awk '$1 == "TOTAL" { print $2 }' "$out/p")
			perio=$(awk -v t="$total" -v n="$ios" 'BEGIN { printf "%.0f", t / n }')
			cpuio=$(awk -v t="$(cat "$out/cpu")" -v n="$ios" 'BEGIN { printf "%.0f", t / n }')
			echo "$perio" > "$out/$c.now"
			echo "$perio" >> "$out/$c.perio"
			echo "$cpuio" >> "$out/$c.cpuio"
			echo $((perio + cpuio)) >> "$out/$c.allio"
			printf "  QD %-2s round %d %-8s %7d IOPS  %5d ns of BPF + %5d of the tracer's CPU per I/O:" \
				"$qd" "$i" "$c" "$(jq -r '.jobs[0].read.iops | floor' "$out/fio.json")" "$perio" "$cpuio"
			awk -v n="$ios" '$1 != "TOTAL" && $3 >= 1000 { printf " %s %d x%.2f", $1, $2, $3 / n }' "$out/p"
			echo " (ns per run x runs per I/O)"
		done
		line=""
		for c in "${configs[@]:1}"; do
			r=$(awk -v a="$(cat "$out/$c.now")" -v b="$(cat "$out/floor.now")" \
				'BEGIN { printf "%.3f", a / b }')
			echo "$r" >> "$out/$c.over"
			line="$line $c/floor $r"
		done
		echo "  QD $qd round $i: BPF time per I/O over the floor's:$line"
	done
	printf "QD %s: median BPF ns per I/O over %d rounds:" "$qd" "$rounds"
	for c in "${configs[@]}"; do printf " %s %s" "$c" "$(median < "$out/$c.perio")"; done
	echo
	printf "QD %s: median of the tracer's CPU time per I/O (its threads: draining, writing):" "$qd"
	for c in "${configs[@]}"; do printf " %s %s" "$c" "$(median < "$out/$c.cpuio")"; done
	echo " ns"
	printf "QD %s: median of BPF + the tracer's CPU per I/O:" "$qd"
	for c in "${configs[@]}"; do printf " %s %s" "$c" "$(median < "$out/$c.allio")"; done
	echo " ns"
	printf "QD %s: median of the rounds' BPF time per I/O over the floor's:" "$qd"
	for c in "${configs[@]:1}"; do printf " %s %s" "$c" "$(median < "$out/$c.over")"; done
	echo " (goal for default: <= 1)"
done
