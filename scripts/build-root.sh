# shellcheck shell=bash
# The Debian sid build root that scripts/setup-build-root.sh makes: a chroot where
# PostgreSQL 19 (Debian experimental's, which needs sid's glibc) is installed, and where
# the extension is built and tested for 19 and cross-compiled for arm64 for every major
# (sid's Rust is the only one here with an aarch64 std). Sourced after scripts/lib.sh,
# whose SNOWFLAKE_PG_ROOT and CLUSTERS_DIR it uses.

BUILD_ROOT=${BUILD_ROOT:-/var/lib/snowflake_pg/roots/build-sid}
# Cargo's target directory of builds in the root: not the host's ($CARGO_TARGET_DIR,
# which lib.sh exports), as sid's rustc and the host's must not share one. It is a host
# directory mounted at the same path, so what the root builds is where the host looks.
BUILD_ROOT_TARGET_DIR=${BUILD_ROOT_TARGET_DIR:-/var/lib/snowflake_pg/target-sid}

build_root_dir() { echo "$BUILD_ROOT"; }

# build_root_bind SOURCE [PATH]: the host's directory SOURCE mounted at PATH in the root
# (by default SOURCE's own path), unless it is mounted there already. A mount there of
# another directory, such as an earlier clone since removed and cloned anew at the same
# path, is taken down first (lazily: a process of an earlier run may still be in it).
build_root_bind() {
  local dest=$BUILD_ROOT${2:-$1}
  mkdir -p "$1" "$dest" || return 1
  if mountpoint -q "$dest"; then
    [[ $(stat -c %d:%i "$1") != "$(stat -c %d:%i "$dest")" ]] || return 0
    umount --lazy "$dest" || return 1
  fi
  mount --bind "$1" "$dest"
}

# cargo_home: the host's CARGO_HOME.
cargo_home() { echo "${CARGO_HOME:-$HOME/.cargo}"; }

# build_root_mounted: the root ready to run commands: /proc (cargo, rustc and postgres
# read it), a tmpfs on /dev/shm (PostgreSQL's dynamic shared memory), and at their own
# paths the clone, the clusters' directory, the root's target directory, and the host's
# cargo registry and git checkouts (the root's cargo takes the host's CARGO_HOME path as
# its own: in_build_root), so that crates are downloaded once, by the host.
# The mounts stay after the command; they are what `rm -rf` of the root would reach, so
# unmount them first (findmnt -R "$BUILD_ROOT").
build_root_mounted() {
  [[ -x $BUILD_ROOT/usr/bin/apt-get ]] ||
    { echo "no build root at $BUILD_ROOT: run scripts/setup-build-root.sh" >&2; return 1; }
  mountpoint -q "$BUILD_ROOT/proc" || mount -t proc proc "$BUILD_ROOT/proc" || return 1
  mkdir -p "$BUILD_ROOT/dev/shm"
  mountpoint -q "$BUILD_ROOT/dev/shm" ||
    mount -t tmpfs -o mode=1777,nosuid,nodev shm "$BUILD_ROOT/dev/shm" || return 1
  build_root_bind "$SNOWFLAKE_PG_ROOT" && build_root_bind "$CLUSTERS_DIR" &&
    build_root_bind "$BUILD_ROOT_TARGET_DIR" &&
    build_root_bind "$(cargo_home)/registry" && build_root_bind "$(cargo_home)/git"
}

# in_build_root COMMAND...: runs COMMAND in the root, in the clone, as root, with a clean
# environment but for the clusters' directory, the step's name and cargo's target
# directory. Other variables go through env: in_build_root env VAR=value COMMAND...
# Cargo is offline there: crates are fetched by the host's cargo (`cargo fetch` in the
# clone, into the registry the root shares), which reaches the registry as this machine
# is set up to (the root's TLS trust is Debian's alone), and whose lock, a file of the
# host's CARGO_HOME, the root's cargo would not see.
in_build_root() {
  build_root_mounted || return 1
  chroot "$BUILD_ROOT" /usr/bin/env -i -C "$SNOWFLAKE_PG_ROOT" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    CLUSTERS_DIR="$CLUSTERS_DIR" STEP_NAME="${STEP_NAME:-}" \
    CARGO_HOME="$(cargo_home)" CARGO_TARGET_DIR="$BUILD_ROOT_TARGET_DIR" CARGO_NET_OFFLINE=true "$@"
}
