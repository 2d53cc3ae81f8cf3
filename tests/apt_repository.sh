#!/usr/bin/env bash
# The signed apt repository (scripts/apt-repository.sh) as a DBA's apt uses it. The
# repository is built from the release files of PostgreSQL 15 (this release's amd64 and
# arm64 .deb, and the previous release's amd64 one that tests/package.sh 15 builds and
# caches in /var/lib/snowflake_pg/releases), signed with a throwaway key made here (the
# release key stays in the CI secret), and served over loopback HTTP (python3's
# http.server on 127.0.0.1, a port from 6690 to 6699; a chroot shares this machine's
# network, so the root reaches it). Then, in the clean bookworm amd64 root of
# tests/package.sh (cached in /var/lib/snowflake_pg/roots, made as it makes it if missing,
# used through an overlay thrown away after), with one sources entry whose Signed-By names
# the repository's keyring copied into the root:
# (a) apt-get update takes the repository without an error or a warning; apt-get install
#     by name, the previous version first (=0.3.0-1), then apt-get install upgrades it to
#     this version, as apt-get upgrade would (dpkg-query and dpkg --verify say so);
#     apt-get remove removes it;
# (b) an index that is not the one the Release file signs (one byte changed in each of
#     the served Packages and Packages.gz of bookworm amd64, the Release not signed anew)
#     makes apt-get update fail with a hash sum mismatch, and nothing of it installable;
# (c) the repository's signatures checked against another key (a second throwaway key's
#     keyring in Signed-By) make apt-get update refuse it: NO_PUBKEY of the signing key,
#     "not signed", and nothing of it installable.
# The root's Debian lists are those of when it was made, and only the repository's are
# fetched (its sources entry alone, other lists kept): this test needs nothing more of
# Debian's archive, and runs offline. The server, the mounts and the keys (their gpg-agent
# too) are always taken down; the repository and its served copy stay after a failure,
# for a look, until the next run. Each check prints its seconds.
# Usage: bash tests/apt_repository.sh   (as root; RELEASE_FILES_DIRS="DIR ..." to take the
#   release files from those directories, by default target/release-files-pg15 and
#   target/release-files-arm64-pg15, which tests/run.sh's package steps of 15 fill)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
fail() { echo "FAIL apt_repository: $*" >&2; exit 1; }
test_began=$EPOCHREALTIME checked=$EPOCHREALTIME
# ok MESSAGE: a check passed, with its seconds (since the check before it).
ok() { echo "ok $* ($(seconds_since "$checked") s)"; checked=$EPOCHREALTIME; }

# 15 on this machine's architecture: the major of this host's Debian release, and the
# only architecture the previous release was built for (amd64).
pg=15 arch=$(dpkg --print-architecture)
release=$(debian_release_of "$pg") version=$(extension_version)
package=postgresql-$pg-snowflake-pg
read -ra files_dirs <<<"${RELEASE_FILES_DIRS:-$SNOWFLAKE_PG_ROOT/target/release-files-pg$pg $SNOWFLAKE_PG_ROOT/target/release-files-arm64-pg$pg}"
for dir in "${files_dirs[@]}"; do
  [[ -d $dir ]] || fail "no release files in $dir: tests/package.sh $pg (and $pg arm64) or scripts/package.sh make them"
done
# The earlier releases' packages of 15, as tests/package.sh caches them.
for dir in /var/lib/snowflake_pg/releases/*/"pg$pg"; do
  if compgen -G "$dir/${package}_*_$arch.deb" >/dev/null; then files_dirs+=("$dir"); fi
done
# This version's package and the newest earlier one, of this architecture.
current=
previous=
for dir in "${files_dirs[@]}"; do
  for deb in "$dir/${package}"_*_"$arch.deb"; do
    [[ -f $deb ]] || continue
    found=$(dpkg-deb -f "$deb" Version)
    if [[ $found == "$version-1" ]]; then
      current=$deb
    elif dpkg --compare-versions "$found" lt "$version-1" &&
      { [[ -z $previous ]] || dpkg --compare-versions "$found" gt "$previous"; }; then
      previous=$found
    fi
  done
done
[[ -n $current ]] || fail "no ${package}_$version-1_$arch.deb in ${files_dirs[*]}"
[[ -n $previous ]] ||
  fail "no earlier release's $package for $arch: tests/package.sh $pg builds 0.3.0's into /var/lib/snowflake_pg/releases"

roots=/var/lib/snowflake_pg/roots
clean=$roots/$release-$arch-pg$pg run=$roots/run-apt-$arch-pg$pg
root=$run/root
work=$CLUSTERS_DIR/apt-repository
gnupghome=$work/gnupg # short: gpg-agent's socket path must fit in 107 bytes
mounts=() server=
in_root() { in_chroot "$root" "$@"; }
# Stops the server and the keys' gpg-agent, deletes the keys, then unmounts what was
# mounted (root_unmount).
cleanup() {
  local code=$? i
  trap - EXIT
  trap '' INT TERM
  if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  if [[ -d $gnupghome ]]; then gpgconf --homedir "$gnupghome" --kill all 2>/dev/null || true; rm -rf "$gnupghome"; fi
  root_unmount "$root" "${mounts[@]}" || code=1
  if ((code == 0)); then rm -rf --one-file-system "$run" "$work"; fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- The repository, signed with a throwaway key, served on loopback ----------------------
rm -rf "$work" && mkdir -p "$work" && install -d -m 700 "$gnupghome"
# new_key NAME: a new signing key without a passphrase; prints its fingerprint.
new_key() {
  gpg --homedir "$gnupghome" --batch --quiet --pinentry-mode loopback --passphrase '' \
    --quick-gen-key "$1 <apt-repository-test@snowflake-pg.invalid>" ed25519 sign 1d 2>/dev/null
  gpg --homedir "$gnupghome" --batch --quiet --no-auto-check-trustdb --with-colons --list-secret-keys "$1" | awk -F: '$1 == "fpr" { print $10; exit }'
}
key=$(new_key "snowflake_pg test archive key") wrong_key=$(new_key "snowflake_pg wrong key")
[[ -n $key && -n $wrong_key ]] || fail "gpg made no throwaway keys"
gpg --homedir "$gnupghome" --batch --export "$wrong_key" >"$work/wrong-keyring.gpg"
repo=$work/repo served=$work/served
bash "$SNOWFLAKE_PG_ROOT/scripts/apt-repository.sh" "$repo" "${files_dirs[@]}" --key "$key" --gnupghome "$gnupghome" \
  >"$work/apt-repository.log" 2>&1 || { cat "$work/apt-repository.log"; fail "scripts/apt-repository.sh failed"; }
index=$repo/dists/$release/main/binary-$arch/Packages
for wanted in "$previous" "$version-1"; do
  grep -qxF "Version: $wanted" "$index" || fail "the $release $arch index lists no $package $wanted"
done
cp -a "$repo" "$served"
ok "$(tail -n 1 "$work/apt-repository.log") (from ${files_dirs[*]}); $(grep -E '^[a-z]+: [0-9]+ amd64, [0-9]+ arm64 packages$' "$work/apt-repository.log" | paste -sd ';' | sed 's/;/; /g')"

# The first free port of ten: the server may lose one to another process between the
# look and its bind, then it exits and the next is tried.
listening() { (: <>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in {6690..6699}; do
  listening "$port" && continue
  python3 -m http.server --bind 127.0.0.1 --directory "$served" "$port" >"$work/http.log" 2>&1 &
  server=$!
  for ((i = 0; i < 100; i++)); do
    listening "$port" && break 2
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
  done
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=
done
[[ -n $server ]] || { cat "$work/http.log"; fail "no HTTP server could listen on 127.0.0.1, ports 6690 to 6699"; }
url=http://127.0.0.1:$port
ok "serving the repository at $url (python3 -m http.server, pid $server)"

# --- The clean root, as tests/package.sh makes and uses it --------------------------------
# Made once (debian_root_make); tests/package.sh makes the same root under the same name,
# so whichever test runs first makes it for both.
if [[ ! -d $clean ]]; then
  times=$(debian_root_make "$clean" "$arch" "$release" "postgresql-$pg") ||
    fail "making the clean $release $arch root with Debian's postgresql-$pg failed"
  ok "made the clean $release $arch root with Debian's postgresql-$pg in $roots ($times, $(du -sm "$clean" | cut -f1) MB)"
fi
root_overlay "$clean" "$run" || fail "no overlay over the clean root $clean"

# The DBA's setup: the keyring, and one sources entry that names it.
keyring=/usr/share/keyrings/snowflake_pg-archive-keyring.gpg
sources=/etc/apt/sources.list.d/snowflake_pg.sources
install -m 644 "$repo/snowflake_pg-archive-keyring.gpg" "$root$keyring"
printf '%s\n' "Types: deb" "URIs: $url" "Suites: $release" "Components: main" "Signed-By: $keyring" >"$root$sources"
# apt_in_root ARGS...: apt-get ARGS in the root, its output in $run/apt.log.
apt_in_root() { in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" >"$run/apt.log" 2>&1; }
# update: apt-get update of the repository alone, from nothing (what an earlier update
# fetched is dropped: an unchanged InRelease would be taken as current, and its indexes not
# fetched again); no retries, which only wait before the same answer.
update() {
  rm -rf "$root/var/lib/apt/lists/partial" "$root/var/lib/apt/lists/127.0.0.1"*
  apt_in_root -o Dir::Etc::SourceList="$sources" -o Dir::Etc::SourceParts=/nonexistent \
    -o APT::Get::List-Cleanup=false -o Acquire::Retries=0 update
}
# installable: the versions of the package apt could install, one a line.
installable() { in_root apt-cache madison "$package" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }'; }
installed() { in_root dpkg-query -W -f="\${Status} \${Version}" "$package" 2>/dev/null || true; }

# --- (a) install, upgrade and remove by name ----------------------------------------------
update || { cat "$run/apt.log"; fail "apt-get update of $url failed"; }
! grep -E '^(W|E):' "$run/apt.log" || fail "apt-get update of $url warns or errs"
grep -q "$url $release InRelease" "$run/apt.log" || { cat "$run/apt.log"; fail "apt-get update did not fetch $release's InRelease"; }
versions=$(installable | sort -V | paste -sd ' ')
[[ " $versions " == *" $previous "* && " $versions " == *" $version-1 "* ]] ||
  fail "apt offers $package in versions '$versions', not $previous and $version-1"
ok "(a) apt-get update of $url, Signed-By $keyring: InRelease verified, no warning; $package offered in $versions"
apt_in_root install "$package=$previous" || { cat "$run/apt.log"; fail "apt-get install $package=$previous failed"; }
[[ $(installed) == "install ok installed $previous" ]] || fail "after apt-get install $package=$previous: $(installed)"
apt_in_root -s upgrade || { cat "$run/apt.log"; fail "apt-get -s upgrade failed"; }
grep -q "^Inst $package \[$previous\] ($version-1 " "$run/apt.log" ||
  { cat "$run/apt.log"; fail "apt-get upgrade would not upgrade $package from $previous to $version-1"; }
apt_in_root install "$package" || { cat "$run/apt.log"; fail "apt-get install $package over $previous failed"; }
[[ $(installed) == "install ok installed $version-1" ]] || fail "after apt-get install $package: $(installed)"
in_root dpkg --verify "$package" || fail "the installed files of $package $version-1 differ from its package's checksums"
apt_in_root remove "$package" || { cat "$run/apt.log"; fail "apt-get remove $package failed"; }
[[ $(installed) != "install ok installed"* && ! -e $root/usr/lib/postgresql/$pg/lib/snowflake_pg.so ]] ||
  fail "after apt-get remove $package: $(installed)"
ok "(a) apt-get install $package=$previous, then apt-get install $package upgraded it to $version-1 (as apt-get upgrade would), files verified; apt-get remove removed it"

# --- (b) an index the Release file does not sign ------------------------------------------
# One byte changed in each index apt may fetch, their sizes unchanged (a size apt does not
# expect fails too, but with another message): in Packages, this version's revision (as a
# newer build slipped in), in Packages.gz one byte of its middle.
tampered=$served/dists/$release/main/binary-$arch
sed -i "s/^Version: $version-1\$/Version: $version-9/" "$tampered/Packages"
size=$(stat -c %s "$tampered/Packages.gz")
byte=$(od -A n -t u1 -j $((size / 2)) -N 1 "$tampered/Packages.gz" | tr -d ' ')
printf '%b' "\\0$(printf %03o $((byte ^ 255)))" | dd of="$tampered/Packages.gz" bs=1 seek=$((size / 2)) conv=notrunc status=none
for file in Packages Packages.gz; do
  ! cmp -s "$repo/dists/$release/main/binary-$arch/$file" "$tampered/$file" || fail "the served $file was not changed"
done
if update; then cat "$run/apt.log"; fail "apt-get update took a changed Packages index"; fi
grep -q "binary-${arch}[/_]Packages.*Hash Sum mismatch" "$run/apt.log" ||
  { cat "$run/apt.log"; fail "apt-get update refused the changed index, but not for a hash sum mismatch"; }
[[ -z $(installable) ]] || fail "apt offers $package from the changed index: $(installable | paste -sd ' ')"
cp "$repo/dists/$release/main/binary-$arch/Packages"* "$tampered/"
ok "(b) a changed Packages and Packages.gz, the Release not signed anew: apt-get update fails ($(grep -m 1 -o 'Hash Sum mismatch' "$run/apt.log")), nothing of it installable"

# --- (c) another key in Signed-By ----------------------------------------------------------
install -m 644 "$work/wrong-keyring.gpg" "$root$keyring"
if update; then cat "$run/apt.log"; fail "apt-get update took the repository with another key in Signed-By"; fi
if ! grep -q "NO_PUBKEY ${key: -16}" "$run/apt.log" || ! grep -q "$url $release InRelease.* is not signed" "$run/apt.log"; then
  cat "$run/apt.log"
  fail "apt-get update refused the repository, but without NO_PUBKEY ${key: -16} and \"is not signed\""
fi
[[ -z $(installable) ]] || fail "apt offers $package from a repository it could not verify: $(installable | paste -sd ' ')"
ok "(c) another key's keyring in Signed-By: apt-get update refuses the repository (NO_PUBKEY ${key: -16}, \"is not signed\"), nothing of it installable"
echo "ok apt repository test ($(seconds_since "$test_began") s)"
