#!/usr/bin/env bash
# The agent protocol's parser under libFuzzer (ASan, UBSan) for a bounded
# 10 s from the seed corpus: no crash, no sanitizer report, and every
# message it accepts encodes back to its own bytes (the target aborts
# otherwise). `make fuzz-agent FUZZ_SECONDS=N` runs it longer.
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d /tmp/iotrail-fuzz.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CLANG=${CLANG:-clang}

command -v "$CLANG" >/dev/null || { echo "SKIP agent_fuzz: clang is not installed"; exit 0; }
if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc tests/fuzz/fuzz_agent_msg.c src/agent/proto.c \
	-o "$TMP/fuzz" 2> "$TMP/cc.log"; then
	if grep -qi "fuzzer" "$TMP/cc.log"; then
		echo "SKIP agent_fuzz: clang has no libFuzzer runtime here ($(head -1 "$TMP/cc.log"))"
		exit 0
	fi
	echo "FAIL agent_fuzz: the fuzz target does not build: $(head -1 "$TMP/cc.log")"
	exit 1
fi
mkdir -p "$TMP/corpus"
cp tests/fuzz/corpus/agent_msg/* "$TMP/corpus/"
(cd "$TMP" && nice -n 10 ./fuzz -max_total_time=10 -max_len=20000 corpus > fuzz.log 2>&1)
rc=$?
runs=$(grep -o 'Done [0-9]* runs' "$TMP/fuzz.log" | grep -o '[0-9]*')
if [ $rc -eq 0 ] && [ "${runs:-0}" -gt 1000 ]; then
	echo "PASS agent_fuzz ($runs inputs in 10 s, no finding)"
else
	echo "FAIL agent_fuzz: exit $rc after ${runs:-?} inputs: $(grep -m1 -E 'ERROR|SUMMARY|abort' "$TMP/fuzz.log")"
	exit 1
fi
