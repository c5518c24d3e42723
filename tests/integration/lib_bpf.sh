# BPF programs and links, as "prog ID" and "link ID" lines (sourced by
# lib.sh and run-tests). This bpftool cannot name the processes that hold
# them (its "pids" is null), so holders come from /proc/PID/fdinfo: a
# program or link fd shows its prog_id / link_id there. A test attributes
# what it checks to its own processes this way, so a run of another
# worktree's tests beside it, recording at the same time, is not counted.

# Every BPF program and link on the machine.
bpf_present() {
	command -v bpftool > /dev/null || return 0
	{ bpftool -j prog show | jq -r '.[] | "prog \(.id)"'
	  bpftool -j link show | jq -r '.[] | "link \(.id)"'; } 2>/dev/null | sort -u
}

# bpf_held_by PID...: the programs and links these processes have open
# (all processes when none is given).
bpf_held_by() {
	local p files=()
	if [ $# -eq 0 ]; then files=(/proc/[0-9]*/fdinfo/*)
	else for p in "$@"; do files+=(/proc/$p/fdinfo/*); done
	fi
	{ grep -h -E '^(prog|link)_id:' "${files[@]}"; } 2>/dev/null \
		| awk '{ sub(/_id:$/, "", $1); print $1, $2 }' | sort -u
}

# What is on the machine and no process holds (pinned, or leaked).
bpf_unheld() {
	comm -23 <(bpf_present) <(bpf_held_by)
}
