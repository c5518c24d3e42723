#!/usr/bin/env bash
# What recording the NVMe/TCP path costs, in the test VM (TCG: no
# nanosecond there is meaningful, so the cost is given in what does not
# depend on the emulator, and the IOPS ratio only as an indication).
#
#   bench/nvme_tcp_cost.sh [ROUNDS]      (default 3; needs root, qemu: the VM tests' setup)
#
# NVMe/TCP over loopback to a null_blk namespace (tests/vm/nvme-tcp-loop),
# fio 4K random reads, libaio, at QD1 and QD16, in alternating rounds:
#   - untraced, and under `iotrail record` (block + nvme + nvmet + nvme-tcp +
#     nvmet-tcp: both sides of every I/O);
#   - per 4K read: events and bytes in the trace (both sides);
#   - per program: the kernel's own run time (kernel.bpf_stats_enabled:
#     run_time_ns / run_cnt), read with bpftool while the recording runs;
#   - the median IOPS ratio, traced / untraced, per depth.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${1:-3}
[ -x build/iotrail ] || { echo "nvme_tcp_cost: build/iotrail is not built (make)" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "nvme_tcp_cost: bpftool is not installed" >&2; exit 1; }
out=$(mktemp -d /tmp/iotrail-tcpcost.XXXXXX)
trap 'rm -rf "$out"' EXIT

cat > "$out/guest.sh" <<GUEST
tests/vm/nvme-tcp-loop 0 > $out/setup 2> $out/setup.err || { cat $out/setup.err; exit 1; }
. $out/setup
sysctl -q kernel.bpf_stats_enabled=1
job() { # NAME DEPTH
	echo "fio --name=\$1 --filename=/dev/\$ns1 --rw=randread --bs=4k --direct=1 --ioengine=libaio \
	     --iodepth=\$2 --time_based --runtime=4 --size=256M --randrepeat=1 \
	     --output-format=json --output=$out/\$1.json"
}
for r in \$(seq $ROUNDS); do
	for qd in 1 16; do
		sh -c "\$(job plain-\$qd-\$r \$qd)"
		build/iotrail record -o $out/traced-\$qd-\$r.trail -- \
			sh -c "\$(job traced-\$qd-\$r \$qd) && bpftool prog show --json > $out/progs-\$qd-\$r.json" \
			2> $out/traced-\$qd-\$r.err
		build/iotrail report --json $out/traced-\$qd-\$r.trail > $out/traced-\$qd-\$r.report.json
	done
done
GUEST
tests/vm/run --out "$out" --timeout 900 -- bash "$out/guest.sh" > "$out/vm.log" 2>&1 ||
	{ echo "nvme_tcp_cost: the VM run failed:" >&2; tail -5 "$out/vm.log" >&2; exit 1; }

iops() { jq -r '.jobs[0].read.iops' "$1" 2>/dev/null; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "NVMe/TCP loopback to null_blk, fio 4K random reads (libaio), $ROUNDS alternating rounds of 4 s, in the test VM (TCG)"
echo
printf "%-6s %14s %14s %7s %12s %12s\n" depth "untraced IOPS" "traced IOPS" ratio "events/read" "bytes/read"
for qd in 1 16; do
	ratios=""
	for r in $(seq "$ROUNDS"); do
		a=$(iops "$out/plain-$qd-$r.json"); b=$(iops "$out/traced-$qd-$r.json")
		ratios="$ratios $(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a }')"
	done
	ratio=$(echo "$ratios" | tr ' ' '\n' | grep . | median)
	pa=$(for r in $(seq "$ROUNDS"); do iops "$out/plain-$qd-$r.json"; done | median)
	pb=$(for r in $(seq "$ROUNDS"); do iops "$out/traced-$qd-$r.json"; done | median)
	# per read: the last round's trace, over fio's reads (fio's setup in it too)
	n=$(jq -r '.jobs[0].read.total_ios' "$out/traced-$qd-$ROUNDS.json")
	e=$(jq -r '.events' "$out/traced-$qd-$ROUNDS.report.json")
	by=$(stat -c %s "$out/traced-$qd-$ROUNDS.trail")
	printf "%-6s %14.0f %14.0f %7.3f %12.2f %12.0f\n" "$qd" "$pa" "$pb" "$ratio" \
		"$(awk -v e="$e" -v n="$n" 'BEGIN { print e / n }')" "$(awk -v b="$by" -v n="$n" 'BEGIN { print b / n }')"
done
echo
echo "per program, QD16, last round (kernel.bpf_stats_enabled; run_time_ns / run_cnt under TCG):"
printf "%-28s %12s %12s %10s\n" program runs "ns total" "ns/run"
jq -r '.[] | select(.run_cnt != null and .run_cnt > 0) | [.name, .run_cnt, .run_time_ns] | @tsv' \
	"$out/progs-16-$ROUNDS.json" | sort -k2 -nr |
	awk -F'\t' '{ printf "%-28s %12d %12d %10.0f\n", $1, $2, $3, $3 / $2 }'
