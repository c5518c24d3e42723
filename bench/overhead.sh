#!/usr/bin/env bash
# Recording overhead: fio 4K random reads on a loop device over a tmpfs file
# (io_uring, QD 8 and 32), ROUNDS rounds per queue depth, each running fio
#   untraced;
#   empty:   under bench/hook_floor 0, programs that do nothing on the three
#            tracepoints an I/O passes (Q, D, C);
#   floor:   under bench/hook_floor 1, programs that write one minimal
#            64-byte record each, drained as iotrail drains its ring: the
#            floor any per-I/O tracer pays here (hook_floor prints its
#            count: 3 records per completed I/O, 0 not written, or the
#            floor is not one);
#   floorcpu: the floor's records into a ring per CPU (bench/hook_floor 4),
#            as iotrail's rings are: the floor without the shared ring's
#            cache-line traffic between the queueing and completing CPUs;
#   sysempty: floorcpu plus programs that do nothing on the hooks the
#            default adds for system calls (sys_enter, sys_exit,
#            io_uring_submit_req, io_uring_complete; bench/hook_floor 5):
#            what having those hooks at all costs;
#   sysfloor: floorcpu plus a 104-byte record wherever the default writes
#            one for a call (an I/O call's exit, an io_uring request's
#            submission and completion; bench/hook_floor 6): the floor of
#            the default's own set of records;
#   block:   under `iotrail record --layers block --dev DEV` (full per-I/O
#            records of that device);
#   default: under `iotrail record --` (what a user gets: every layer this
#            kernel supports, every device, every process, default rings);
#   syscall: `iotrail record --layers syscall --` alone (the default's other
#            half: what the system-call layer adds beside the block layer);
#   reject:  `iotrail record --layers block --dev DEV --filter` with a
#            predicate no I/O passes (op=read && op=write): what an I/O a
#            task filters out costs (issue 14);
#   sample100: the same with --sample 1/100;
#   baseline (with BASELINE=path/to/another/iotrail, an older build): the
#            default recording with that build, so a change is measured
#            side by side.
# Prints each round's IOPS and ratios to untraced, then per queue depth the
# medians of the ratios and of default / floor within each round (the
# goal: >= 1). The order inside a round is reversed every other round so
# that a drift in the machine's speed (it is shared) does not favour a side.
#   bench/overhead.sh [ROUNDS] [SECONDS]      (defaults: 6 rounds, 4 s per run)
#   CONFIGS="untraced floor reject sample100" bench/overhead.sh ...: those
#   only (untraced first; the default / floor line needs both)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}
secs=${2:-4}
[ "$(id -u)" -eq 0 ] || { echo "overhead: needs root" >&2; exit 1; }
baseline=${BASELINE:-}
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "overhead: BASELINE=$baseline is not an executable" >&2; exit 1; }

. bench/lib.sh bench

read -r -a configs <<< "${CONFIGS:-untraced empty floor block default}"
[ -z "$baseline" ] || [[ " ${configs[*]} " == *" baseline "* ]] || configs+=(baseline)

# one configuration at queue depth $2: its IOPS into $out/NAME.iops, the
# line it printed (hook_floor's count, iotrail's summary) into $out/NAME.note
run_config() {
	local name=$1 qd=$2
	case $name in
	untraced) fio_iops "$qd" ;;
	empty) fio_iops "$qd" build/bench/hook_floor 0 -- ;;
	floor) fio_iops "$qd" build/bench/hook_floor 1 -- ;;
	floorcpu) fio_iops "$qd" build/bench/hook_floor 4 -- ;;
	sysempty) fio_iops "$qd" build/bench/hook_floor 5 -- ;;
	sysfloor) fio_iops "$qd" build/bench/hook_floor 6 -- ;;
	block) fio_iops "$qd" build/iotrail record -o "$out/b.trail" --layers block --dev "$dev" -- ;;
	default) fio_iops "$qd" build/iotrail record -o "$out/d.trail" -- ;;
	syscall) fio_iops "$qd" build/iotrail record -o "$out/y.trail" --layers syscall -- ;;
	reject) fio_iops "$qd" build/iotrail record -o "$out/r.trail" --layers block --dev "$dev" \
		--filter 'op=read && op=write' -- ;;
	sample100) fio_iops "$qd" build/iotrail record -o "$out/s.trail" --layers block --dev "$dev" \
		--sample 1/100 -- ;;
	baseline) fio_iops "$qd" "$baseline" record -o "$out/o.trail" -- ;;
	esac > "$out/$name.iops"
	grep -E '^(hook_floor|iotrail record):' "$out/run.log" | tail -1 > "$out/$name.note" || true
}

echo "iotrail record overhead: fio randread 4K io_uring on ${dev} (loop over tmpfs), ${secs}s runs"
echo "(empty: empty programs on Q, D, C; floor: one 64-byte ring record per hook, drained;"
echo " block: iotrail record --layers block --dev; default: iotrail record --, every layer)"
for qd in 8 32; do
	rm -f "$out"/*.ratios
	for i in $(seq 1 "$rounds"); do
		for c in $(round_order "$i" "${configs[@]}"); do run_config "$c" "$qd"; done
		printf "  QD %-3s round %d: %s\n" "$qd" "$i" "$(ratios_line "${configs[@]}")"
		[ -s "$out/default.iops" ] && [ -s "$out/floor.iops" ] &&
		awk -v d="$(cat "$out/default.iops")" -v f="$(cat "$out/floor.iops")" \
			'BEGIN { printf "%.4f\n", d / f }' >> "$out/default-floor.ratios"
		for c in floor floorcpu sysempty sysfloor block default syscall baseline reject sample100; do
			if [ -s "$out/$c.note" ]; then echo "      [$c: $(cat "$out/$c.note")]"; fi
		done
	done
	line="QD $qd: median IOPS ratio to untraced over $rounds rounds:"
	for c in "${configs[@]:1}"; do
		line="$line $c $(median < "$out/$c.ratios"),"
	done
	echo "${line%,}"
	[ ! -s "$out/default-floor.ratios" ] ||
	echo "QD $qd: median of default / floor within a round: $(median < "$out/default-floor.ratios") (goal >= 1)"
done
