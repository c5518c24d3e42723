#!/usr/bin/env bash
# A bio-based device (zram: no request queue, no scheduler): an I/O is a
# bio, from Q to its completion. A fixed number of fio reads and writes
# must show up as exactly that many I/Os of each op on the device, with a
# Q2C stage only (no requests, so no I or D).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

NIOS=5000
why=$(host_blocker)
[ -z "$why" ] && [ ! -e /sys/class/zram-control/hot_add ] && why="no zram support (/sys/class/zram-control)"
[ -n "$why" ] && { skip block_biobased "$why"; exit 0; }

# a zram device of our own, removed on exit
id=$(cat /sys/class/zram-control/hot_add) || { skip block_biobased "cannot add a zram device"; exit 0; }
zdev=zram$id
remove_zram() { echo "$id" > /sys/class/zram-control/hot_remove 2>/dev/null; cleanup; }
trap remove_zram EXIT
echo 64M > "/sys/block/$zdev/disksize" || { fail block_biobased "cannot size /dev/$zdev"; exit 1; }

for rw in read write; do
	name=block_biobased_$rw
	"$IOTRAIL" record -o "$TMP/$rw.trail" --layers block --dev "$zdev" -- \
		fio --name=z --filename="/dev/$zdev" --rw=rand$rw --bs=4k --direct=1 --ioengine=psync \
		--number_ios=$NIOS --size=60M --output-format=json --output="$TMP/$rw.json" \
		> "$TMP/$rw.out" 2>&1 || { fail "$name" "record failed: $(tail -1 "$TMP/$rw.out")"; continue; }
	fio_ios=$(jq -r ".jobs[0].$rw.total_ios" "$TMP/$rw.json")
	"$IOTRAIL" report --json "$TMP/$rw.trail" > "$TMP/$rw.report" \
		|| { fail "$name" "report failed"; continue; }
	sel=".groups[] | select(.key.op == \"$rw\" and .key.dev == \"$zdev\")"
	got=$(jq -r "[$sel | .count] | add // 0" "$TMP/$rw.report")
	stages=$(jq -r "[$sel | .stages[].name] | unique | join(\",\")" "$TMP/$rw.report")
	if [ "$got" != "$fio_ios" ] || [ "$fio_ios" != "$NIOS" ]; then
		fail "$name" "iotrail counted $got ${rw}s on $zdev, fio did $fio_ios (asked $NIOS)"
	elif [ "$stages" != "Q2C" ]; then
		fail "$name" "stages of a bio-based device should be Q2C only, got '$stages'"
	else
		pass "$name ($got ${rw}s == fio; stages $stages)"
	fi
done
exit ${FAILED:-0}
