#!/usr/bin/env bash
# Fetches Debian's stock kernel for the test VM (tests/vm/run): downloads the
# .deb that linux-image-amd64 currently depends on (apt-get download, never
# installed), extracts it, runs depmod on the extracted tree (the .deb ships
# no modules.dep) and prints two lines:
#   the path of vmlinuz
#   the modules directory (…/lib/modules/<version>)
# Cached and idempotent: once extracted, a second run downloads nothing.
#
# Usage: scripts/vm-kernel.sh [-q]
#   IOTRAIL_VM_CACHE  cache directory (default /var/cache/iotrail-vm when
#                     writable, else build/vm in the repository)
#   IOTRAIL_VM_KPKG   kernel package to resolve (default linux-image-amd64)
set -euo pipefail

quiet=0
[ "${1:-}" = "-q" ] && quiet=1
say() { [ "$quiet" = 1 ] || echo "vm-kernel: $*" >&2; }
die() { echo "vm-kernel: $*" >&2; exit 1; }

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${IOTRAIL_VM_CACHE:-}" ]; then
    cache=$IOTRAIL_VM_CACHE
elif mkdir -p /var/cache/iotrail-vm 2>/dev/null && [ -w /var/cache/iotrail-vm ]; then
    cache=/var/cache/iotrail-vm
else
    cache=$repo/build/vm
fi
mkdir -p "$cache" || die "cannot create cache directory $cache"
meta=${IOTRAIL_VM_KPKG:-linux-image-amd64}

# Writes $2 = the ELF vmlinux inside the bzImage $1 (xz, gzip or zstd
# payload), if it carries the PVH entry note QEMU needs to boot it directly.
extract_vmlinux() {
    local img=$1 out=$2 off magic tool
    command -v readelf >/dev/null || return 1
    for magic in '\xfd7zXZ\x00:xz' '\x1f\x8b\x08:gzip' '\x28\xb5\x2f\xfd:zstd'; do
        tool=${magic##*:}
        command -v "$tool" >/dev/null || continue
        for off in $(LC_ALL=C grep -obUaP "${magic%:*}" "$img" 2>/dev/null | cut -d: -f1); do
            # trailing data after the payload makes the tool complain: ignore
            tail -c +$((off + 1)) "$img" | "$tool" -dc > "$out.tmp" 2>/dev/null
            if [ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = '177ELF' ] &&
               LC_ALL=C readelf -n "$out.tmp" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
                mv "$out.tmp" "$out"
                return 0
            fi
        done
    done
    rm -f "$out.tmp"
    return 1
}

# Prints the lines above for an extracted tree, or fails.
print_tree() {
    local tree=$1 vmlinuz moddir
    vmlinuz=$(ls "$tree"/boot/vmlinuz-* 2>/dev/null | head -n1)
    moddir=$(ls -d "$tree"/lib/modules/*/ 2>/dev/null | head -n1)
    [ -n "$vmlinuz" ] && [ -n "$moddir" ] && [ -f "${moddir}modules.dep" ] || return 1
    echo "$vmlinuz"
    echo "${moddir%/}"
    if [ ! -e "$tree/boot/vmlinux" ] && [ ! -e "$tree/boot/.no-vmlinux" ]; then
        extract_vmlinux "$vmlinuz" "$tree/boot/vmlinux" || : > "$tree/boot/.no-vmlinux"
    fi
    [ -f "$tree/boot/vmlinux" ] && echo "$tree/boot/vmlinux"
    return 0
}

# Serialise concurrent runs (tests may start several VMs at once).
exec 9>"$cache/.lock"
command -v flock >/dev/null && flock 9

# Resolve linux-image-amd64 -> linux-image-6.1.0-NN-amd64 and its version
# from the local apt lists (no network needed for that). apt-cache takes
# about a second here, so the answer is kept until the lists change.
lists_key="$meta $(stat -c '%Y %s %n' /var/lib/apt/lists/*Packages* 2>/dev/null | cksum)"
pkg="" ver=""
if [ -f "$cache/resolved" ] && [ "$(head -n1 "$cache/resolved")" = "$lists_key" ]; then
    pkg=$(sed -n 2p "$cache/resolved")
    ver=$(sed -n 3p "$cache/resolved")
fi
if [ -z "$pkg" ] || [ -z "$ver" ]; then
    pkg=$(apt-cache depends "$meta" 2>/dev/null |
          sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1) || true
    [ -n "$pkg" ] && ver=$(apt-cache policy "$pkg" 2>/dev/null |
                           sed -n 's/^ *Candidate: *//p' | head -n1)
    if [ -n "$pkg" ] && [ -n "$ver" ] && [ "$ver" != "(none)" ]; then
        printf '%s\n%s\n%s\n' "$lists_key" "$pkg" "$ver" > "$cache/resolved"
    fi
fi
if [ -z "$pkg" ] || [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
    # apt knows nothing (no lists): fall back to the newest tree in the cache
    newest=$(ls -dt "$cache"/linux-image-*/ 2>/dev/null | head -n1) || true
    [ -n "$newest" ] && print_tree "${newest%/}" && exit 0
    die "cannot resolve the kernel package behind $meta with apt-cache (run apt-get update?) and no kernel is cached in $cache"
fi

tree=$cache/${pkg}_${ver//:/%3a}
if print_tree "$tree" 2>/dev/null; then
    exit 0
fi

command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (package dpkg)"
command -v depmod >/dev/null || die "depmod is missing: run scripts/install-deps.sh --vm (package kmod)"

deb=$(ls "$cache"/"${pkg}"_"${ver//:/%3a}"_*.deb 2>/dev/null | head -n1) || true
if [ -z "$deb" ]; then
    say "downloading $pkg $ver"
    # apt-get download writes into the current directory; as root it may warn
    # that the _apt sandbox user cannot write there, which is harmless.
    if ! out=$(cd "$cache" && apt-get download -q "$pkg=$ver" 2>&1); then
        die "apt-get download $pkg=$ver failed: $(echo "$out" | grep -v '^W:' | tail -n1)"
    fi
    deb=$(ls "$cache"/"${pkg}"_*.deb 2>/dev/null | head -n1) || true
    [ -n "$deb" ] || die "apt-get download $pkg=$ver left no .deb in $cache"
fi

say "extracting $(basename "$deb")"
tmp=$(mktemp -d "$cache/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp" || die "dpkg-deb -x $deb failed"
# Debian 12 ships modules under lib/ (not usr/lib/)
[ -d "$tmp/lib/modules" ] || { [ -d "$tmp/usr/lib/modules" ] && mkdir -p "$tmp/lib" &&
                               mv "$tmp/usr/lib/modules" "$tmp/lib/modules"; }
kver=$(ls "$tmp/lib/modules" 2>/dev/null | head -n1) || true
[ -n "$kver" ] || die "$deb holds no lib/modules/<version>"
ls "$tmp"/boot/vmlinuz-* >/dev/null 2>&1 || die "$deb holds no boot/vmlinuz-*"
say "depmod $kver"
depmod -b "$tmp" "$kver" || die "depmod -b $tmp $kver failed"
rm -rf "$tree"
mv "$tmp" "$tree"
trap - EXIT
# the extracted tree is all we need; drop the .deb to save space
rm -f "$deb"
print_tree "$tree"
