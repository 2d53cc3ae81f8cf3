#!/usr/bin/env bash
# One reliability scenario against servers of another architecture (arm64 on an amd64
# machine), emulated: every server the scenario starts is Debian's PostgreSQL V of that
# architecture with the release files' library (the .deb of scripts/package.sh --arch ARCH
# V, unpacked into the root), run in an overlay over the clean Debian root of
# tests/package.sh (debian_server_root) by qemu-user (scripts/setup-emulation.sh). The
# scenario itself, psql and pgbench are this machine's, over the servers' sockets (lib.sh,
# "A cluster's server runs on this machine; or ..."). The overlay is thrown away after, its
# servers stopped by the scenario and its mounts taken down whatever happens. An emulated
# server is several times slower: the scenarios keep their checks of what must hold (every
# id distinct, none below the mark, the clean errors), and those of how much a server gets
# done in a given time take what an emulated one does (RELIABILITY_EMULATED; each scenario
# says where).
# Usage: bash tests/reliability/emulated.sh ARCH V SCENARIO   (as root; with the release
# files of V for ARCH in $RELEASE_FILES_DIR, target/release-files-ARCH-pgV by default)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
arch=${1:?usage: emulated.sh ARCH V SCENARIO} version=${2:?usage: emulated.sh ARCH V SCENARIO}
scenario=${3:?usage: emulated.sh ARCH V SCENARIO}
fail() { echo "FAIL emulated $scenario: $*" >&2; exit 1; }
pg_major "$version" >/dev/null || exit 2
[[ $arch != "$(dpkg --print-architecture)" ]] || fail "$arch is this machine's architecture: run the scenario itself"
[[ -n $(debian_release_of "$version") ]] || fail "no Debian release packages PostgreSQL $version: no $arch server of it to run"
scenario=${scenario%.sh}
script=$SNOWFLAKE_PG_ROOT/tests/reliability/$scenario.sh
[[ -f $script ]] || fail "no scenario $script"
release_files=${RELEASE_FILES_DIR:-$SNOWFLAKE_PG_ROOT/target/release-files-$arch-pg$version}
deb=$release_files/postgresql-$version-snowflake-pg_$(extension_version)-1_$arch.deb
[[ -f $deb ]] || fail "no $deb: scripts/package.sh --arch $arch $version makes it"
bash "$SNOWFLAKE_PG_ROOT/scripts/setup-emulation.sh" >/dev/null || fail "no $arch emulation here"

# The clean root of tests/package.sh, with libfaketime of ARCH in a layer over it (the
# faked clocks of 06-clock and 13-high-water-mark), both made once.
clean=$(debian_server_root "$version" "$arch") || fail "no clean $arch root of PostgreSQL $version"
lower=$(debian_root_layer "$clean" "$clean-reliability" libfaketime) || fail "no layer with libfaketime over $clean"
run=$(dirname "$clean")/run-reliability-$arch-pg$version-$scenario
root=$run/root mounts=() clusters=""
cleanup() {
  local code=$?
  trap - EXIT
  trap '' INT TERM
  root_unmount "$root" "${mounts[@]}" || code=1
  if [[ -n $clusters ]]; then rm -f "$clusters"; fi
  # A failed run's overlay stays for a look, until the next run.
  if ((code == 0)); then rm -rf --one-file-system "$run"; else echo "its clusters, logs included: $run/upper$clusters" >&2; fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root_overlay "$lower" "$run" || fail "no overlay over $clean"
# The extension's files, as the package installs them; the root's postgres user and group
# with this machine's ids; and the servers' shared memory.
dpkg-deb -x "$deb" "$root"
sed -i -E "s/^postgres:([^:]*):[0-9]+:[0-9]+:/postgres:\1:$(id -u postgres):$(id -g postgres):/" "$root/etc/passwd"
sed -i -E "s/^postgres:([^:]*):[0-9]+:/postgres:\1:$(id -g postgres):/" "$root/etc/group"
mkdir -p "$root/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" && mounts+=("$root/dev/shm")
# The scenario's clusters: a directory of the root, and here a link of the same path to it,
# so that a cluster's files have one path on both sides, and what the scenario mounts there
# (13-high-water-mark's small file system) is mounted in the root, where its server sees it.
clusters=$CLUSTERS_DIR/$arch-pg$version-$scenario
mkdir -p "$root$clusters" "$CLUSTERS_DIR"
ln -sfn "$root$clusters" "$clusters"
export CLUSTERS_DIR=$clusters
# initdb takes some 6 s of CPU emulated, and the scenarios start a dozen servers: each
# cluster is a copy of one data directory that this root's initdb made (cluster_init's
# CLUSTER_TEMPLATE), kept beside the clean root, made once and anew with it; none of these
# scenarios tells servers apart by their system identifier, which the copies share.
template=$clean-initdb
(
  flock 9
  stamp=$(stat -c '%i %Y' "$clean/var/lib/dpkg/status")
  [[ $(cat "$template/made-over" 2>/dev/null) != "$stamp" ]] || exit 0
  made=/var/tmp/initdb-template
  rm -rf "${root:?}$made" && mkdir -p "$root$made" && chown postgres: "$root$made"
  in_chroot "$root" runuser -u postgres -- "$(server_bin_of "$version")/initdb" -D "$made/data" -A trust \
    -U postgres --no-sync >"$root$made/initdb.log" 2>&1 || { cat "$root$made/initdb.log" >&2; exit 1; }
  rm -rf "$template" && mkdir -p "$template" && cp -a "$root$made/data" "$template/data" &&
    echo "$stamp" >"$template/made-over"
) 9>"$template.lock" || fail "initdb of PostgreSQL $version in the $arch root failed"
export CLUSTER_TEMPLATE=$template/data
echo "PostgreSQL $(in_chroot "$root" dpkg-query -W -f="\${Version}" "postgresql-$version") of Debian $(debian_release_of "$version") on $arch, emulated (qemu-user), the library of $(basename "$deb")"
SERVER_ROOT=$root RELIABILITY_EMULATED=true bash "$script" "$version"
