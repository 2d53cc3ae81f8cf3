#!/usr/bin/env bash
# Lets this amd64 Debian machine run arm64 (aarch64) programs, as the package test of the
# arm64 release files does (tests/package.sh V arm64: Debian's arm64 PostgreSQL in an
# arm64 Debian root): the binfmt_misc file system, mounted where it is not (a new boot
# unmounts it, and the registrations go with it); bookworm's qemu-user-static and
# binfmt-support, installed where missing; and qemu-aarch64 registered with the kernel,
# with the F flag, so that the kernel holds qemu open and a root runs its aarch64 programs
# without a copy of qemu inside. A small aarch64 program checks that all this works; where
# it runs already, nothing is installed or registered. Safe to run again, and quick then
# (a fraction of a second). As root.
# Usage: bash scripts/setup-emulation.sh
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fail() { echo "FAIL setup-emulation: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || fail "run it as root"

binfmt=/proc/sys/fs/binfmt_misc entry=/proc/sys/fs/binfmt_misc/qemu-aarch64

# The check: the smallest static aarch64 Linux program, written out byte by byte (no arm64
# file need be on this machine yet): an ELF header, one loadable segment, and three
# instructions, `mov x0, #42; mov x8, #93 (exit); svc #0`. Only an emulated run exits 42.
probe=$(mktemp)
trap 'rm -f "$probe"' EXIT
{
  printf '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00' # 64-bit, little-endian
  printf '\x02\x00\xb7\x00\x01\x00\x00\x00'                         # executable, e_machine 183 (aarch64)
  printf '\x78\x00\x40\x00\x00\x00\x00\x00'                         # entry 0x400078: the code
  printf '\x40\x00\x00\x00\x00\x00\x00\x00'                         # program headers at 64
  printf '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'         # no sections, no flags
  printf '\x40\x00\x38\x00\x01\x00\x40\x00\x00\x00\x00\x00'         # header sizes, one segment
  printf '\x01\x00\x00\x00\x05\x00\x00\x00'                         # PT_LOAD, readable and executable
  printf '\x00\x00\x00\x00\x00\x00\x00\x00'                         # from offset 0
  printf '\x00\x00\x40\x00\x00\x00\x00\x00\x00\x00\x40\x00\x00\x00\x00\x00' # at 0x400000
  printf '\x84\x00\x00\x00\x00\x00\x00\x00\x84\x00\x00\x00\x00\x00\x00\x00' # 132 bytes: the file
  printf '\x00\x10\x00\x00\x00\x00\x00\x00'                         # page-aligned
  printf '\x40\x05\x80\xd2\xa8\x0b\x80\xd2\x01\x00\x00\xd4'         # the three instructions
} >"$probe"
chmod 755 "$probe"
# emulation_works: qemu-aarch64 is registered, enabled, with the F flag, and runs the probe.
emulation_works() {
  local status=0
  grep -qx enabled "$entry" 2>/dev/null && grep -q '^flags: .*F' "$entry" || return 1
  "$probe" 2>/dev/null || status=$?
  ((status == 42))
}

mountpoint -q "$binfmt" || mount -t binfmt_misc binfmt_misc "$binfmt" || fail "could not mount binfmt_misc on $binfmt"
# The registration is the kernel's, for every root of this machine: where it works already
# (set up before, or seen from a root such as the build root's), nothing is installed.
if ! emulation_works; then
  apt_install_missing qemu-user-static binfmt-support >/dev/null
  # A registration that does not do (without F, or stale) is taken out, to be made anew.
  if [[ -f $entry ]]; then echo -1 >"$entry"; fi
  update-binfmts --enable qemu-aarch64 || fail "update-binfmts --enable qemu-aarch64 failed"
  emulation_works || fail "an aarch64 program does not run here with qemu-aarch64 registered: $(cat "$entry" 2>&1)"
fi
echo "ok arm64 emulation: qemu-aarch64 registered with binfmt_misc (flags $(sed -n 's/^flags: //p' "$entry")), an aarch64 program ran"
