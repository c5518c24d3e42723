#!/usr/bin/env bash
# Installs, from Debian's packages, everything iotrail needs to build, test
# and demo. Idempotent: a package already present is not touched, and the
# script does nothing (and needs no network) when all are there.
set -euo pipefail

# build: compiler for user space and BPF, libbpf, skeleton generator, libs
# libssl-dev: OpenSSL 3, the agent channel's TLS 1.3 with a pre-shared key
build_pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev pkg-config libssl-dev"
# libcurl4-openssl-dev: export --format clickhouse posts over HTTP
build_pkgs="$build_pkgs libcurl4-openssl-dev"
# fuzzing (make fuzz, tests/fuzz): libFuzzer and the sanitizers' runtimes
# for Debian's default clang (clang only recommends them)
build_pkgs="$build_pkgs libclang-rt-dev"
# libinih-dev: the task file's INI parser (record --task, src/task.c)
build_pkgs="$build_pkgs libinih-dev"
# libjson-c-dev: `iotrail cost --compare` reads two results written by --json
build_pkgs="$build_pkgs libjson-c-dev"
# systemtap-sdt-dev: sys/sdt.h, for tests/progs/usdt_demo.c (a binary with
# USDT probes built in, the ground truth of `iotrail probe --usdt`)
build_pkgs="$build_pkgs systemtap-sdt-dev"
# tests, demo and benchmarks: the workload and its reference, loop devices;
# fuse3, libfuse3-dev: tests/tools/slowfs (a disk with a known delay);
# e2fsprogs: mkfs.ext4 (a file system on a loop device: writeback, readahead)
# postgresql-15: Debian 12's PostgreSQL server and pgbench
# (tests/integration/test_postgres.sh; its own cluster, started by the test)
test_pkgs="fio util-linux jq fuse3 libfuse3-dev e2fsprogs postgresql-15"
# chromium: the HTML report loaded headless (tests/integration/test_html.sh)
test_pkgs="$test_pkgs chromium"
# clickhouse-server: Debian's ClickHouse (18.16), started on loopback by
# tests/integration/test_clickhouse.sh with its own config and data
test_pkgs="$test_pkgs clickhouse-server"
# prometheus: Debian's Prometheus server, which tests/integration/test_online.sh
# starts on loopback to scrape iotrail serve (its own config and storage)
test_pkgs="$test_pkgs prometheus"
# man-db, groff-base: the man pages rendered (tests/integration/test_install.sh);
# python3: the Perfetto export decoded (tests/tools/check_perfetto.py)
test_pkgs="$test_pkgs man-db groff-base python3"
# time: /usr/bin/time, the report's peak memory (tests/integration/test_report_memory.sh)
test_pkgs="$test_pkgs time"
# VM tests: a stock kernel runs under QEMU with the host's root shared by 9p
# (xz-utils: the uncompressed kernel that boots faster; iproute2: ip and tc)
vm_pkgs="qemu-system-x86 busybox-static kmod cpio xz-utils iproute2"
# dmsetup: `iotrail cost --op dm-crypt` maps dm-crypt over its devices in the
# guest (test_modules.sh; the host kernel has no device-mapper)
vm_pkgs="$vm_pkgs dmsetup"
# f2fs-tools: mkfs.f2fs, F2FS on a zoned null_blk in the guest (test_zones.sh)
vm_pkgs="$vm_pkgs f2fs-tools"

# bench/peers.sh only (not make test's): the tracers iotrail is compared with
bench_pkgs="bpftrace linux-perf libbpf-tools blktrace"

want="$build_pkgs $test_pkgs"
case "${1:-}" in
    --vm|--all) want="$want $vm_pkgs" ;;
    --bench) want="$want $bench_pkgs" ;;
esac

missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages:$missing; run as root (or: sudo apt-get install$missing)" >&2
    exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends $missing >/dev/null
