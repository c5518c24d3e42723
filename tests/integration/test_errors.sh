#!/usr/bin/env bash
# Bad input gets one clear line on stderr and a non-zero exit, never a crash.
cd "$(dirname "$0")/../.."
. tests/integration/lib.sh

[ -x "$IOTRAIL" ] || { skip errors "$IOTRAIL is not built"; exit 0; }

expect_error() { # name: command...
	local name=$1; shift
	"$@" > "$TMP/out" 2> "$TMP/err"; local rc=$?
	local lines; lines=$(wc -l < "$TMP/err")
	if [ $rc -eq 0 ]; then
		fail "error_$name" "exit status 0 for: $*"
	elif [ $rc -ge 128 ]; then
		fail "error_$name" "died by signal $((rc - 128)) for: $*"
	elif [ "$lines" -ne 1 ]; then
		fail "error_$name" "$lines lines on stderr, want 1: $(head -3 "$TMP/err" | tr '\n' '|')"
	elif ! grep -q '^iotrail' "$TMP/err"; then
		fail "error_$name" "message does not say who failed: $(cat "$TMP/err")"
	else
		pass "error_$name ($(cat "$TMP/err"))"
	fi
}

echo "just some text, not a trace" > "$TMP/text.trail"
: > "$TMP/empty.trail"
printf 'IOTRAIL\0\x63\0\0\0' > "$TMP/future.trail"
head -c 100000 /dev/urandom > "$TMP/random.trail"

expect_error unknown_command "$IOTRAIL" frobnicate
expect_error report_missing_file "$IOTRAIL" report "$TMP/nope.trail"
expect_error report_text_file "$IOTRAIL" report "$TMP/text.trail"
expect_error report_empty_file "$IOTRAIL" report "$TMP/empty.trail"
expect_error report_future_version "$IOTRAIL" report "$TMP/future.trail"
expect_error report_random_bytes "$IOTRAIL" report "$TMP/random.trail"
expect_error report_bad_group_key "$IOTRAIL" report --group-by op,colour "$TMP/text.trail"
expect_error report_bad_fabric_group_key "$IOTRAIL" report --fabric-group-by op,dev "$TMP/text.trail"
expect_error report_no_file "$IOTRAIL" report
# probe --untraced SECS: not a number, and out of its range (0.1 to 3600 s)
expect_error probe_untraced_not_number "$IOTRAIL" probe --untraced soon
expect_error probe_untraced_zero "$IOTRAIL" probe --untraced 0
expect_error probe_untraced_too_long "$IOTRAIL" probe --untraced 86400
expect_error record_bad_option "$IOTRAIL" record --frobnicate
# values that once wrapped around or slipped through (found reading the
# parsers for tests/fuzz/fuzz_args.c): refused before anything starts
expect_error record_pid_too_large "$IOTRAIL" record -p 4294967297 -d 1
expect_error record_ringbuf_too_large "$IOTRAIL" record --ringbuf-mb 4294967298 -d 1
expect_error record_drain_nice_range "$IOTRAIL" record --drain-nice -21 -d 1
expect_error record_duration_nan "$IOTRAIL" record -d nan
expect_error record_duration_inf "$IOTRAIL" record -d inf
if [ "$(id -u)" -eq 0 ]; then
	unheld_before=$(bpf_unheld)
	expect_error record_missing_dev "$IOTRAIL" record -o "$TMP/x.trail" --dev /dev/nonexistent -d 1
	expect_error record_not_block_dev "$IOTRAIL" record -o "$TMP/x.trail" --dev /dev/null -d 1
	expect_error record_empty_dev_list "$IOTRAIL" record -o "$TMP/x.trail" --dev , -d 1
	expect_error record_dev_list_bad "$IOTRAIL" record -o "$TMP/x.trail" --dev loop0,/dev/null -d 1
	expect_error record_bad_command "$IOTRAIL" record -o "$TMP/x.trail" -- /nonexistent/program
	expect_error record_unwritable_output "$IOTRAIL" record -o /proc/iotrail.trail -d 1
	expect_error record_bad_duration "$IOTRAIL" record -o "$TMP/x.trail" -d soon
	# the file of library SONAME (ldconfig's cache), empty without one
	lib_file() { ldconfig -p | awk -v n="$1" '$1 == n { print $NF; exit }'; }
	# runs the rest with library file $1 unreadable: in a mount namespace
	# of its own, /dev/null bound over it
	hidden() {
		local so=$1
		shift
		unshare -m sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$(readlink -f "$so")" "$@"
	}
	# libcurl is loaded only to post (export --url, record --sink): with
	# its file hidden, report still works and export --url fails in one line
	curl_so=$(lib_file libcurl.so.4)
	if [ -n "$curl_so" ] && command -v unshare > /dev/null; then
		nocurl() { hidden "$curl_so" "$@"; }
		if nocurl "$IOTRAIL" report tests/data/usdt-demo.trail > /dev/null 2> "$TMP/nocurl.err"; then
			pass "error_report_without_libcurl (report runs with libcurl unloadable)"
		else
			fail error_report_without_libcurl "report failed with libcurl unloadable: $(head -1 "$TMP/nocurl.err")"
		fi
		expect_error export_without_libcurl nocurl "$IOTRAIL" export --format clickhouse \
			--url http://127.0.0.1:1 tests/data/usdt-demo.trail
		grep -q 'libcurl' "$TMP/err" || fail error_export_without_libcurl_says_so \
			"the line does not name libcurl: $(cat "$TMP/err")"
	else
		skip error_export_without_libcurl "no libcurl.so.4 in ldconfig's cache, or no unshare"
	fi
	# OpenSSL likewise, loaded only for the agent's channel: with libssl
	# hidden the same way, record --target reaches a listening port and
	# fails in one line naming OpenSSL, before anything is recorded
	ssl_so=$(lib_file libssl.so.3)
	if [ -n "$ssl_so" ] && command -v unshare > /dev/null && command -v python3 > /dev/null; then
		"$IOTRAIL" agent --new-key "$TMP/ssl.key" 2> /dev/null
		python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); time.sleep(5)' > "$TMP/ssl.port" &
		lpid=$!
		for _ in $(seq 50); do [ -s "$TMP/ssl.port" ] && break; sleep 0.1; done
		nossl() { hidden "$ssl_so" "$@"; }
		expect_error record_target_without_openssl nossl "$IOTRAIL" record -o "$TMP/ssl.trail" -d 1 \
			--target "127.0.0.1:$(cat "$TMP/ssl.port")" --key "$TMP/ssl.key"
		grep -q 'OpenSSL' "$TMP/err" && [ ! -e "$TMP/ssl.trail" ] ||
			fail error_record_target_without_openssl_says_so \
				"the line does not name OpenSSL, or a trace was written: $(cat "$TMP/err")"
		kill "$lpid" 2> /dev/null; wait "$lpid" 2> /dev/null
	else
		skip error_record_target_without_openssl "no libssl.so.3 in ldconfig's cache, or no unshare or python3"
	fi
	# without privileges: the line names the capabilities (a copy of the
	# binary nobody can run: $TMP is private)
	if command -v runuser > /dev/null && id nobody > /dev/null 2>&1; then
		pub=$(mktemp -d /tmp/iotrail-it.${RUNTAG}pub.XXXXXX)
		chmod 755 "$pub" && cp "$IOTRAIL" "$pub/iotrail" && chmod 755 "$pub/iotrail"
		for verb in record probe; do
			args=(); [ $verb = record ] && args=(-d 1 -o "$pub/x.trail")
			expect_error "${verb}_unprivileged" runuser -u nobody -- "$pub/iotrail" $verb "${args[@]}"
			grep -q 'CAP_BPF' "$TMP/err" || fail "error_${verb}_unprivileged_names_caps" \
				"the line does not name CAP_BPF: $(cat "$TMP/err")"
		done
		rm -rf "$pub"
	else
		skip error_record_unprivileged "runuser or the user nobody is missing"
	fi
	# every failure above came after nothing, or after the probes were
	# attached (the bad COMMAND): with the failing processes gone, no new
	# program or link may be left that no process holds
	if command -v bpftool > /dev/null; then
		left=$(comm -13 <(echo "$unheld_before") <(bpf_unheld) | tr '\n' ' ')
		[ -z "${left// /}" ] && pass "error_paths_leave_no_bpf (no BPF program or link left that no process holds)" \
			|| fail error_paths_leave_no_bpf "left attached after the failures: $left"
	else
		skip error_paths_leave_no_bpf "bpftool is not installed"
	fi
else
	skip error_record "record's checks need root"
fi
exit ${FAILED:-0}
