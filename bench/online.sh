#!/usr/bin/env bash
# The online mode's cost (issue 14): fio 4K random reads, io_uring, on a loop
# device over a tmpfs file (mq-deadline, as bench/peers.sh), QD 8 and 32,
# ROUNDS rounds per queue depth in alternating order; each configuration's
# median IOPS ratio to untraced, in one run:
#   online      iotrail top --json --dev DEV (Q2D, D2C, Q2C histograms per
#               device and op in the kernel, read every second)
#   biolatency  libbpf-tools' biolatency -d DEV (one D2C histogram)
#   before      with BEFORE=PATH: iotrail top of another build (an earlier
#               commit's build/iotrail), to compare a change in one run
# Each tool is started, given SETTLE seconds to attach, then fio runs, then
# the tool is stopped with SIGINT; its output must show that it counted.
# IOPS ratios swing by tens of percent on this shared machine, so each
# tool's BPF run time per I/O is measured too (kernel.bpf_stats_enabled on
# for the run, restored after; it adds two clock reads per program run,
# to both tools alike): the run_time_ns of the tool's programs (loaded after
# it started, by their names: online_*, biolatency's block_rq_*) just
# before it is stopped, over fio's I/Os. Run it on a machine of one's own
# (another tool loading programs of those names would be counted).
# Run it alone: flock -x /work/heavy.lock bench/online.sh [ROUNDS] [SECONDS]
# (defaults: 5 rounds, 4 s per run). biolatency: scripts/install-deps.sh --bench.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
secs=${2:-4}
settle=${SETTLE:-2}
[ "$(id -u)" -eq 0 ] || { echo "online: needs root" >&2; exit 1; }
[ -x build/iotrail ] || { echo "online: build first (make all)" >&2; exit 1; }
command -v biolatency > /dev/null || { echo "online: biolatency is not installed (scripts/install-deps.sh --bench)" >&2; exit 1; }

. bench/lib.sh online
echo mq-deadline > "/sys/block/${dev#/dev/}/queue/scheduler"
tool=""
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap '[ -z "$tool" ] || kill -INT $tool 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled="$stats_was"; cleanup' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# fio at queue depth $1 beside tool $2 (its output in $out/$2.out): IOPS
fio_beside() {
	local qd=$1 name=$2 iops first pattern=^online_
	[ "$name" != biolatency ] || pattern=^block_rq_
	first=$(bpftool prog show -j | jq '[.[].id] | max // 0')
	case $name in
	online) build/iotrail top --json --dev "$dev" > "$out/online.out" 2> "$out/online.err" & ;;
	before) "$BEFORE" top --json --dev "$dev" > "$out/before.out" 2> "$out/before.err" & ;;
	biolatency) biolatency -d "${dev#/dev/}" > "$out/biolatency.out" 2> "$out/biolatency.err" & ;;
	esac
	tool=$!
	sleep "$settle"
	kill -0 $tool 2>/dev/null || { echo "online: $name exited: $(tail -1 "$out/$name.err")" >&2; exit 1; }
	iops=$(fio_iops "$qd")
	# the tool's programs' run time (they go when it exits): ns per fio I/O
	bpftool prog show -j | jq --argjson first "$first" --arg re "$pattern" \
		--argjson ios "$(jq '.jobs[0].read.total_ios' "$out/fio.json")" \
		'[.[] | select(.id > $first and (.name // "" | test($re))) | .run_time_ns // 0] | add // 0 | . / $ios | floor' \
		>> "$out/$name.bpfns"
	kill -INT $tool
	wait $tool || true
	tool=""
	# it counted: biolatency's histogram, top's reads
	case $name in
	online | before) [ "$(jq -s '[.[].groups[].ios] | add // 0' "$out/$name.out")" -gt 0 ] ;;
	biolatency) grep -q usecs "$out/biolatency.out" ;;
	esac || { echo "online: $name counted nothing" >&2; exit 1; }
	echo "$iops"
}

run_config() {
	case $1 in
	untraced) fio_iops "$2" ;;
	*) fio_beside "$2" "$1" ;;
	esac > "$out/$1.iops"
}

echo "online mode: fio randread 4K io_uring on $dev (loop over tmpfs, mq-deadline), ${secs}s runs, $rounds rounds"
echo "kernel $(uname -r)"
configs=(untraced online biolatency)
[ -z "${BEFORE:-}" ] || configs+=(before)
for qd in 8 32; do
	rm -f "$out"/*.ratios "$out"/*.bpfns
	for i in $(seq 1 "$rounds"); do
		for c in $(round_order "$i" "${configs[@]}"); do run_config "$c" "$qd"; done
		printf "  QD %-3s round %d: %s\n" "$qd" "$i" "$(ratios_line "${configs[@]}")"
	done
	for c in "${configs[@]:1}"; do
		echo "$c $(median < "$out/$c.ratios")" >> "$out/table.$qd"
		echo "$c $(median < "$out/$c.bpfns")" >> "$out/bpfns.$qd"
	done
done
echo
echo "median IOPS ratio to untraced     QD 8    QD 32"
while read -r c r8; do
	printf "  %-30s %6s %8s\n" "$c" "$r8" "$(awk -v c="$c" '$1 == c { print $2 }' "$out/table.32")"
done < "$out/table.8"
echo "median BPF run time per I/O (ns)  QD 8    QD 32"
while read -r c n8; do
	printf "  %-30s %6s %8s\n" "$c" "$n8" "$(awk -v c="$c" '$1 == c { print $2 }' "$out/bpfns.32")"
done < "$out/bpfns.8"
