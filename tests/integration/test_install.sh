#!/usr/bin/env bash
# `make install DESTDIR=... PREFIX=/usr` into a temporary root, then:
#   - the installed binary runs (--version, --help) and every file went
#     under DESTDIR/PREFIX (bin, share/man/man1, share/bash-completion);
#   - a man page per command `iotrail --help` lists, and iotrail.1; each
#     renders with `man -l` and `groff -ww` without a warning, at 80
#     columns, and names its command's options (export's --what);
#   - the bash completion, sourced, completes the commands and export's
#     formats from the installed binary.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

[ -x "$IOTRAIL" ] || { skip install "$IOTRAIL is not built (run make)"; exit 0; }
command -v man >/dev/null && command -v groff >/dev/null \
	|| { skip install "man or groff is missing (Debian: man-db, groff-base)"; exit 0; }

root=$TMP/root
if ! make -s --no-print-directory install DESTDIR="$root" PREFIX=/usr > "$TMP/make.out" 2>&1; then
	fail install_make "make install failed: $(tail -3 "$TMP/make.out")"
	exit 1
fi
bin=$root/usr/bin/iotrail
outside=$(find "$root" -type f ! -path "$root/usr/*")
if [ -x "$bin" ] && "$bin" --version | grep -qE '^iotrail [0-9]' && "$bin" --help > "$TMP/help" &&
   grep -q '^  export ' "$TMP/help" && [ -z "$outside" ]; then
	pass "install_binary ($("$bin" --version) runs from DESTDIR/usr/bin)"
else
	fail install_binary "installed binary missing or not running, or files outside PREFIX: $outside"
fi

mandir=$root/usr/share/man/man1
pages=0 bad=""
for c in "" $(awk '/^  [a-z]+   / { print $1 }' "$TMP/help"); do
	page=$mandir/iotrail${c:+-$c}.1
	if [ ! -s "$page" ]; then
		bad="$bad; no page for ${c:-iotrail}"
		continue
	fi
	warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null; groff -ww -man -Tutf8 -z "$page" 2>&1)
	[ -z "$warn" ] || bad="$bad; $page: $warn"
	pages=$((pages + 1))
done
MANWIDTH=80 man -l "$mandir/iotrail-export.1" 2>/dev/null | grep -q -- '--what KIND' \
	|| bad="$bad; iotrail-export.1 does not name --what"
if [ -z "$bad" ]; then
	pass "install_man ($pages pages render without a warning)"
else
	fail install_man "${bad#; }"
fi

comp=$root/usr/share/bash-completion/completions/iotrail
if [ -s "$comp" ]; then
	got=$(bash -c '
		source "$1"
		COMP_WORDS=("$2" exp); COMP_CWORD=1; _iotrail; echo "${COMPREPLY[*]}"
		COMP_WORDS=("$2" export --format ""); COMP_CWORD=3; _iotrail; echo "${COMPREPLY[*]}"
		COMP_WORDS=("$2" export --wh); COMP_CWORD=2; _iotrail; echo "${COMPREPLY[*]}"' _ "$comp" "$bin")
	want=$'export\nclickhouse csv perfetto\n--what'
	if [ "$got" = "$want" ]; then
		pass "install_completion (commands, export's formats and options)"
	else
		fail install_completion "completed: $(echo "$got" | tr '\n' '|'), want $(echo "$want" | tr '\n' '|')"
	fi
else
	fail install_completion "$comp is missing"
fi
exit ${FAILED:-0}
