#!/usr/bin/env bash
# The log-rotation case that loses data in log shippers (the DIO paper's
# Fluent Bit issue): a writer appends to app.log, renames it to app.log.1
# and starts a new app.log; the reader reopens app.log but resumes at its
# old offset. The event list must show the reader's read of the NEW file
# (another file tag, same path) at the stale offset 26, returning 0; with
# the fixed reader, at offset 0, returning the 16 new bytes.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh
. tests/integration/lib_syscall.sh

why=$(sys_blocker)
if [ -n "$why" ]; then
	skip syscall_log_rotation "$why"
	skip syscall_log_rotation_fixed "$why"
	exit 0
fi

check() { # name want_offset want_ret [--fixed]
	local name=$1 off=$2 ret=$3 dir=$TMP/$1; shift 3
	mkdir -p "$dir"
	if ! "$IOTRAIL" record --layers syscall --path "$dir" -o "$TMP/$name.trail" -- \
		"$PROGS/log_rotate" "$dir" "$TMP/$name.manifest" "$@" > "$TMP/$name.out" 2>&1; then
		fail "$name" "record failed: $(tail -1 "$TMP/$name.out")"
		return
	fi
	local reader
	reader=$(head -1 "$TMP/$name.manifest" | cut -f2)
	# the reader's reads: [offset, ret, inode, path] each
	"$IOTRAIL" report --json --events "$TMP/$name.trail" |
		jq -c "[.events[] | select(.pid == $reader and .call == \"pread64\") |
			[.offset, .ret, .tag.inode, .path]]" > "$TMP/$name.reads"
	local n first second
	n=$(jq length "$TMP/$name.reads")
	first=$(jq -c '.[0]' "$TMP/$name.reads")
	second=$(jq -c '.[1]' "$TMP/$name.reads")
	if [ "$n" != 2 ]; then
		fail "$name" "$n reads of the reader in the event list, want 2"
	elif [ "$(jq -r '.[1][0]' "$TMP/$name.reads")" != "$off" ] ||
	     [ "$(jq -r '.[1][1]' "$TMP/$name.reads")" != "$ret" ]; then
		fail "$name" "read of the new file: $second, want offset $off returning $ret"
	elif [ "$(jq -r '.[0][2]' "$TMP/$name.reads")" = "$(jq -r '.[1][2]' "$TMP/$name.reads")" ] &&
	     [ "$(jq -r '.[0][2]' "$TMP/$name.reads")" != null ]; then
		# the same inode number can come back; the tag (first-seen time) tells them apart
		local tags
		tags=$("$IOTRAIL" report --json --events "$TMP/$name.trail" |
			jq "[.events[] | select(.pid == $reader and .call == \"pread64\") | .tag.first_seen_ns] | unique | length")
		[ "$tags" = 2 ] && pass "$name (reads $first then $second: two file tags)" ||
			fail "$name" "both reads carry the same file tag: $first $second"
	elif [ "$(jq -r '.[0][3]' "$TMP/$name.reads")" != "$(jq -r '.[1][3]' "$TMP/$name.reads")" ]; then
		fail "$name" "paths differ: $first $second"
	else
		pass "$name (reads $first then $second)"
	fi
}

check syscall_log_rotation 26 0
check syscall_log_rotation_fixed 0 16 --fixed
exit ${FAILED:-0}
