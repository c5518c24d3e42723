# Sourced by the benchmarks: a 512 MiB loop device over a tmpfs file,
# zeroed (so reads hit allocated pages), in $dev; a scratch directory in
# $out; both removed on exit. $1: the script's name, for the file names.
img=$(mktemp /dev/shm/iotrail-"$1".XXXXXX)
out=$(mktemp -d /tmp/iotrail-"$1".XXXXXX)
dev=""
cleanup() { [ -n "$dev" ] && losetup -d "$dev"; rm -f "$img"; rm -rf "$out"; }
trap cleanup EXIT
truncate -s 512M "$img"
dev=$(losetup -f --show --direct-io=on "$img")
dd if=/dev/zero of="$dev" bs=1M count=512 oflag=direct status=none
