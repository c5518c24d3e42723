#!/bin/sh
# Writes the man pages, iotrail.1 and iotrail-COMMAND.1 for each command,
# from the binary's own --help texts: one source for the terminal and the
# manual, so the pages cannot drift from the options the binary takes.
# `make man` runs it (into build/man); `make install` installs them.
#   doc/man/mkman.sh IOTRAIL OUTDIR
set -eu
bin=$1
out=$2
mkdir -p "$out"
version=$("$bin" --version | sed 's/^iotrail //')

# roff-safe text: backslashes, hyphens (\- keeps an option's minus a
# minus), a line starting with a control character, and characters past
# ASCII as groff's \[uXXXX] (a help text's x or minus sign: troff warns on
# raw UTF-8 bytes)
esc() {
	sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" |
		perl -CS -pe 's/([^\x00-\x7F])/sprintf("\\[u%04X]", ord($1))/ge'
}

# The commands and their one-line descriptions, from `iotrail --help`.
commands=$("$bin" --help | awk '/^  [a-z]+   / { print $1 }')
what() {
	"$bin" --help | awk -v c="$1" '$1 == c { $1 = ""; sub(/^ +/, ""); print }'
}
see_also() {
	for c in $commands; do
		[ "$c" = "$1" ] || printf '.BR iotrail\\-%s (1)%s\n' "$c" ","
	done | sed '$ s/,$//'
}

for c in $commands; do
	page=$out/iotrail-$c.1
	help=$("$bin" "$c" --help)
	{
		printf '.TH IOTRAIL\\-%s 1 "" "iotrail %s" "iotrail manual"\n' \
			"$(echo "$c" | tr a-z A-Z)" "$version"
		printf ".nh\n"
		printf '.SH NAME\niotrail\\-%s \\- %s\n' "$c" "$(what "$c" | esc)"
		# the usage lines: "usage: ..." and the lines that follow it up
		# to the first empty one
		printf '.SH SYNOPSIS\n.nf\n'
		echo "$help" | awk 'NR == 1 || (go && NF) { go = 1; sub(/^(usage: )?/, ""); sub(/^       /, ""); print; next } { exit }' | esc
		printf '.fi\n.SH DESCRIPTION\n.nf\n'
		echo "$help" | awk 'seen && !NF && !body { body = 1; next } !NF && !seen { seen = 1; body = 1; next } body' | esc
		printf '.fi\n.SH SEE ALSO\n.BR iotrail (1),\n'
		see_also "$c"
	} > "$page"
done

{
	printf '.TH IOTRAIL 1 "" "iotrail %s" "iotrail manual"\n' "$version"
	printf '.nh\n.SH NAME\niotrail \\- follow storage I/O through Linux and tell where the time went\n'
	printf '.SH SYNOPSIS\n.B iotrail\n.I COMMAND\n.RI [ OPTIONS ]\n'
	cat <<'TEXT'
.SH DESCRIPTION
.B iotrail
records every storage I/O with eBPF probes chosen at run time for the
kernel at hand (system call, file system, block layer, NVMe driver,
NVMe/TCP initiator and target) into a trace file, and turns the file into
latency percentiles per stage, queue depth, I/O sizes and IOPS over time.
Recording needs root and a kernel with BTF; reporting and exporting read
the file alone.
.PP
The commands (each has its page, and
.B iotrail
.I COMMAND
.B \-\-help
lists its options):
.PP
.nf
TEXT
	"$bin" --help | awk '/^  [a-z]+   /' | esc
	cat <<'TEXT'
.fi
.SH EXIT STATUS
0 on success; 1 when the work failed (a file that cannot be read or
written, a kernel that cannot be traced); 2 on a usage error. Every error
is one line on standard error: what failed, why, and what to do.
.SH FILES
.TP
.I iotrail.trail
the trace file
.B iotrail record
writes by default (mode 0600: it holds paths, commands and process names)
.TP
.I /etc/iotrail/agent.key
the shared key of
.B iotrail agent
and
.B iotrail record \-\-target
.SH EXAMPLES
.nf
iotrail record \-o fio.trail \-\- fio job.fio
iotrail report fio.trail
iotrail export \-\-format perfetto \-o fio.json fio.trail
.fi
.SH SEE ALSO
TEXT
	see_also ""
} > "$out/iotrail.1"
