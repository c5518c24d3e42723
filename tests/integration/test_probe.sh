#!/usr/bin/env bash
# `iotrail probe` tells, per layer, whether and how it can be traced. Checked
# against what this kernel exposes (tracefs, BTF), not against our own output.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

why=$(host_blocker)
[ -n "$why" ] && { skip probe "$why"; exit 0; }

"$IOTRAIL" probe --json > "$TMP/probe.json" 2> "$TMP/err" \
	|| { fail probe "probe --json failed: $(head -1 "$TMP/err")"; exit 1; }
jq -e . "$TMP/probe.json" > /dev/null || { fail probe_json "not valid JSON"; exit 1; }

# block: this kernel has BTF for block_rq_issue, so tp_btf must be chosen
if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "'btf_trace_block_rq_issue'"; then
	hook=$(jq -r '.layers[] | select(.name == "block") | .hook' "$TMP/probe.json")
	[ "$hook" = tp_btf ] && pass "probe_block_tp_btf" \
		|| fail probe_block_tp_btf "block hook is '$hook', want tp_btf"
fi
# a layer whose module is not loaded must be reported unavailable with a reason
# (tracefs is where the kernel lists its tracepoints; mount it if needed)
tracefs=/sys/kernel/tracing
[ -d $tracefs/events ] || mount -t tracefs nodev $tracefs 2>/dev/null
for layer in nvme nvmet nvme-tcp nvmet-tcp; do
	sel=".layers[] | select(.name == \"$layer\")"
	avail=$(jq -r "$sel | .available" "$TMP/probe.json")
	reason=$(jq -r "$sel | .why + (if .fix != \"\" then \"; fix: \" + .fix else \"\" end)" "$TMP/probe.json")
	truth=no
	case $layer in
	nvme) [ -d $tracefs/events/nvme ] && truth=yes ;;
	nvmet) [ -d $tracefs/events/nvmet ] && truth=yes ;;
	nvme-tcp) grep -qw nvme_tcp /proc/modules 2>/dev/null && truth=yes ;;
	nvmet-tcp) grep -qw nvmet_tcp /proc/modules 2>/dev/null && truth=yes ;;
	esac
	name="probe_$layer"
	if [ "$truth" = no ] && [ "$avail" != no ]; then
		fail "$name" "available=$avail, but this kernel has no such hooks"
	elif [ "$truth" = yes ] && [ "$avail" = no ]; then
		fail "$name" "available=no, but this kernel has the hooks"
	elif [ "$avail" = no ] && [ "$reason" = "" ]; then
		fail "$name" "unavailable without a reason"
	else
		pass "$name (available=$avail${reason:+: $reason})"
	fi
done
# F2FS's tracepoints (record --f2fs): each listed under the fs layer,
# usable exactly when tracefs has it (the f2fs module loaded, or built in)
f2fs_bad="" f2fs_seen=""
for tp in f2fs_gc_begin f2fs_gc_end f2fs_background_gc f2fs_write_checkpoint f2fs_submit_page_write; do
	sel=".layers[] | select(.name == \"fs\") | .hooks[] | select(.name == \"$tp\")"
	hook=$(jq -r "$sel | .hook" "$TMP/probe.json")
	reason=$(jq -r "$sel | .why" "$TMP/probe.json")
	truth=no
	[ -d $tracefs/events/f2fs/$tp ] && truth=yes
	if [ -z "$hook" ]; then
		f2fs_bad="$f2fs_bad; $tp not listed"
	elif [ "$truth" = yes ] && [ "$hook" = none ]; then
		f2fs_bad="$f2fs_bad; $tp unusable ($reason), but tracefs has it"
	elif [ "$truth" = no ] && [ "$hook" != none ]; then
		f2fs_bad="$f2fs_bad; $tp usable with $hook, but tracefs has no such tracepoint"
	elif [ "$truth" = no ] && [ -z "$reason" ]; then
		f2fs_bad="$f2fs_bad; $tp unusable without a reason"
	fi
	f2fs_seen="$f2fs_seen $tp=$hook"
done
if [ -n "$f2fs_bad" ]; then
	fail probe_f2fs "${f2fs_bad#; }"
else
	pass "probe_f2fs (as tracefs has them:$f2fs_seen; $(jq -r '.layers[] | select(.name == "fs") | .hooks[0] | .why + (if .fix != "" then "; fix: " + .fix else "" end)' "$TMP/probe.json"))"
fi
# --untraced against ftrace's record of the same context switches
bash tests/integration/untraced_check.sh "$IOTRAIL" "$TMP" probe_untraced || FAILED=1
exit ${FAILED:-0}
