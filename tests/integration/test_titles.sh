#!/usr/bin/env bash
# Process titles and roles (doc/report.md, --group-by role):
#  1. title_at_exit: short-lived processes (tests/progs/retitle.c) that
#     rewrite their argv area 20 ms after they start, write 8 blocks with
#     O_DIRECT and exit ~30 ms later (well within the recorder's 100 ms
#     title delay) are recorded with their final title, not the one they
#     started with: three as "itrole: writer", one as "itrole: other".
#  2. role_groups: `report --group-by role,op` gives the block layer's
#     groups by that title: 24 writes for the three writers (their
#     processes folded into one role), 8 for the other, exactly; with
#     role,pid the writers stay three groups.
# The title at exit needs the sched_process_exit tracepoint to fire
# before the process's memory is gone (Linux 6.16 on); older kernels skip
# case 1 (they keep the first title of such a process).
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

why=$(host_blocker)
[ -z "$why" ] && [ ! -x build/tests/retitle ] && why="build/tests/retitle is not built (run make)"
if [ -n "$why" ]; then
	skip title_at_exit "$why"; skip role_groups "$why"
	exit 0
fi
make_loop 64 none || { fail title_at_exit "cannot set up a loop device"; exit 1; }

"$IOTRAIL" record -o "$TMP/t.trail" --layers block,syscall --dev "$LOOPNAME" -- sh -c "
	for i in 1 2 3; do build/tests/retitle $LOOPDEV 'itrole: writer' 8 || exit 1; done
	build/tests/retitle $LOOPDEV 'itrole: other' 8; sleep 0.2" > "$TMP/rec.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail title_at_exit "record exit $rc: $(tail -2 "$TMP/rec.out")"; exit 1; }

# ---- 1. the final title of processes gone within 100 ms ----
read -r kmaj kmin < <(uname -r | awk -F. '{ print $1, $2 }')
if [ "$kmaj" -lt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -lt 16 ]; }; then
	skip title_at_exit "kernel $(uname -r): sched_process_exit fires after the process's memory is gone (6.16 on)"
else
	"$IOTRAIL" report --json "$TMP/t.trail" > "$TMP/t.json"
	roles=$(jq -r '[.roles[] | select(.role | startswith("itrole") or
		startswith("build/tests/retitle")) | "\(.role)=\(.processes)"] | sort | join(",")' "$TMP/t.json")
	if [ "$roles" = "itrole: other=1,itrole: writer=3" ]; then
		pass title_at_exit
	else
		fail title_at_exit "roles of the retitle processes: '$roles', want 'itrole: other=1,itrole: writer=3'"
	fi
fi

# ---- 2. block groups by role ----
groups=$("$IOTRAIL" report --json --group-by role,op "$TMP/t.trail" | jq -r '[.groups[] |
	select(.key.op == "write" and (.key.role | startswith("itrole"))) |
	"\(.key.role)=\(.count)"] | join(",")')
npids=$("$IOTRAIL" report --json --group-by role,pid "$TMP/t.trail" | jq -r '[.groups[] |
	select(.key.role == "itrole: writer")] | length')
text=$("$IOTRAIL" report --group-by role,op "$TMP/t.trail" | grep -c '^itrole: writer *write  *24 ')
if [ "$groups" = "itrole: other=8,itrole: writer=24" ] && [ "$npids" = 3 ] && [ "$text" = 1 ]; then
	pass role_groups
else
	fail role_groups "write groups '$groups' (want 'itrole: other=8,itrole: writer=24'), writer groups by pid $npids (want 3), text rows $text (want 1)"
fi
exit 0
