#!/usr/bin/env bash
# `iotrail extents` over many files: NFILES (default 100000) files of 4K
# to 16K in 100 directories on ext4 over a loop device (tmpfs-backed),
# then `iotrail extents --json` and the text view over them, each timed
# with a cold cache (the file system is mounted again before the run, so
# its inodes and extent trees are read from the device) and warm (a second
# run). Run it alone: flock -x /work/heavy.lock bench/extents.sh
set -eu
cd "$(dirname "$0")/.."
NFILES=${NFILES:-100000}
IOTRAIL=${IOTRAIL:-$PWD/build/iotrail}
img=$(mktemp /dev/shm/iotrail-extents.XXXXXX)
mnt=$(mktemp -d /tmp/iotrail-extents.XXXXXX)
dev=""
cleanup() { mountpoint -q "$mnt" && umount "$mnt"; [ -n "$dev" ] && losetup -d "$dev"; rm -f "$img"; rmdir "$mnt"; }
trap cleanup EXIT
truncate -s 2G "$img"
dev=$(losetup -f --show --direct-io=on "$img")
mkfs.ext4 -q -F -b 4096 -N $((NFILES + 1000)) "$dev"
mount "$dev" "$mnt"

echo "making $NFILES files..." >&2
b4=$(printf '%4096s' '')
for d in $(seq 0 99); do
	mkdir "$mnt/$d"
	for ((i = d; i < NFILES; i += 100)); do
		# 1 to 4 blocks: a mix of one- and several-extent files
		case $((i % 4)) in
		0) printf '%s' "$b4" > "$mnt/$d/$i" ;;
		1) printf '%s%s' "$b4" "$b4" > "$mnt/$d/$i" ;;
		2) printf '%s%s%s' "$b4" "$b4" "$b4" > "$mnt/$d/$i" ;;
		3) printf '%s%s%s%s' "$b4" "$b4" "$b4" "$b4" > "$mnt/$d/$i" ;;
		esac
	done
done
sync -f "$mnt"

# seconds and peak RSS (KiB) of one run: "SECS RSS"
run() {
	/usr/bin/time -f '%e %M' -o "$mnt.time" "$IOTRAIL" extents "$@" "$mnt" > "$mnt.out"
	cat "$mnt.time"
}
remount() { umount "$mnt"; mount "$dev" "$mnt"; }

remount
read -r cold_s cold_kb < <(run --json)
read -r warm_s warm_kb < <(run --json)
files=$(jq .walk.files "$mnt.out")
extents=$(jq .walk.extents "$mnt.out")
bytes=$(stat -c %s "$mnt.out")
remount
read -r text_s text_kb < <(run)
rm -f "$mnt.out" "$mnt.time"
echo "files $files, extents $extents, JSON $((bytes / 1048576)) MiB"
echo "json cold ${cold_s}s (peak RSS $((cold_kb / 1024)) MiB), warm ${warm_s}s; text cold ${text_s}s (peak RSS $((text_kb / 1024)) MiB)"
