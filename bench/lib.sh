# Sourced by the benchmarks (overhead.sh, memory.sh, peers.sh), with the
# script's name as $1: a 512 MiB loop device over a tmpfs file (scheduler
# none), zeroed (so reads hit allocated pages), in $dev; a scratch
# directory in $out; both removed on exit. Needs $secs (seconds per fio
# run).
img=$(mktemp /dev/shm/iotrail-"$1".XXXXXX)
out=$(mktemp -d /tmp/iotrail-"$1".XXXXXX)
dev=""
cleanup() { [ -n "$dev" ] && losetup -d "$dev"; rm -f "$img"; rm -rf "$out"; }
trap cleanup EXIT
truncate -s 512M "$img"
dev=$(losetup -f --show --direct-io=on "$img")
# a loop device keeps its scheduler across detach and attach (peers.sh sets
# mq-deadline): none, as a new one has, unless the script sets another
echo none > "/sys/block/${dev#/dev/}/queue/scheduler"
dd if=/dev/zero of="$dev" bs=1M count=512 oflag=direct status=none

# fio's IOPS (4K random reads, io_uring) at queue depth $1 under the command
# prefix that follows (may be empty); the prefix's own output in $out/run.log
fio_iops() {
	local qd=$1; shift
	"$@" fio --name=bench --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=io_uring --iodepth="$qd" --time_based --runtime="$secs" --size=512M \
		--output-format=json --output="$out/fio.json" > "$out/run.log" 2>&1
	jq -r '.jobs[0].read.iops | floor' "$out/fio.json"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The configurations ($2...) in the order of round $1: reversed every other
# round, so that a drift in the machine's speed (it is shared) favours none.
round_order() {
	local i=$1 k
	shift
	if [ $((i % 2)) -eq 1 ]; then
		echo "$@"
	else
		for ((k = $#; k >= 1; k--)); do printf "%s " "${!k}"; done
		echo
	fi
}

# "name iops-ratio" of each configuration after the first (untraced) in
# $out/NAME.iops, appended to $out/NAME.ratios; prints the ratios' line
ratios_line() {
	local base c r line=""
	base=$(cat "$out/$1.iops")
	shift
	for c in "$@"; do
		r=$(awk -v a="$(cat "$out/$c.iops")" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
		echo "$r" >> "$out/$c.ratios"
		line="$line  $c $(cat "$out/$c.iops") ($r)"
	done
	echo "untraced $base$line"
}
