#!/usr/bin/env bash
# Builds a signed apt repository in OUT from the .deb files of release-file directories
# (scripts/package.sh's, one per architecture: target/release-files and
# target/release-files-arm64, say; an earlier release's too, such as 0.2.1's, so that the
# repository upgrades its packages), for DBAs to install and upgrade with apt-get:
#   pool/main/s/snowflake-pg/*.deb
#   dists/SUITE/main/binary-ARCH/Packages and Packages.gz, for the suites bookworm,
#       trixie, sid and experimental (the Debian releases that package a supported major:
#       debian_release_of) and the architectures amd64 and arm64 (scripts/package.sh's);
#   dists/SUITE/Release (apt-ftparchive release: the index files' sizes and hashes), signed
#       twice as apt reads either: InRelease (clearsigned) and Release.gpg (detached);
#   snowflake_pg-archive-keyring.gpg (the public key, binary, for a sources entry's
#       Signed-By) and snowflake_pg-archive-keyring.asc (the same, armored), beside dists/.
# Which suite carries which package: every suite carries every major (as the PGDG's
# archive serves every PostgreSQL on every Debian release; a suite without Debian's
# postgresql-N just leaves the package uninstallable there), except where the package's
# library needs a newer glibc than the suite's release has (glibc_fits): 19's amd64
# library, which needs 2.39, goes into trixie, sid and experimental, not bookworm (2.36).
# The Release files carry no Valid-Until: the repository changes only with a release, and
# a date after which apt refuses it would take installs down between releases.
# Signing: gpg --batch with the secret key KEYID (by default the one secret key of the
# keyring) of $GNUPGHOME, or of DIR with --gnupghome (the release key is imported from the
# CI secret into a throwaway home; no private key belongs in this repository). The key
# must need no passphrase (gpg --batch asks none), or have it preset in gpg-agent. Both
# signatures are checked with gpgv against the exported keyring before the repository is
# put in place. OUT is built beside itself and then swapped in; an OUT that holds anything
# but an earlier run's repository is refused. Prints what each suite holds and the size.
# Usage: bash scripts/apt-repository.sh OUT FILES_DIR... [--key KEYID] [--gnupghome DIR]
set -euo pipefail
# lib.sh speaks up where there is no Rust 1.96, as in the release's signing job (a bare
# Debian container, scripts/release.sh sign): nothing this script needs.
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" 2>/dev/null
usage="usage: apt-repository.sh OUT FILES_DIR... [--key KEYID] [--gnupghome DIR]"
fail() { echo "apt-repository.sh: $*" >&2; exit 1; }

key='' args=()
while (($#)); do
  case $1 in
    --key) key=${2:?$usage}; shift 2 ;;
    --gnupghome) export GNUPGHOME=${2:?$usage}; shift 2 ;;
    --*) echo "$usage" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} >= 2)) || { echo "$usage" >&2; exit 2; }
out=${args[0]%/} files_dirs=("${args[@]:1}")
# Absolute: gpg runs from inside the new tree.
if [[ -n ${GNUPGHOME:-} ]]; then GNUPGHOME=$(cd "$GNUPGHOME" && pwd); fi
# apt-ftparchive, readelf (glibc_needed), gpg.
apt_install_missing apt-utils binutils gnupg >/dev/null

# The suites: one per Debian release that packages a supported major, oldest first.
suites=()
for pg in "${PG_VERSIONS[@]}"; do
  release=$(debian_release_of "$pg")
  if [[ -n $release && " ${suites[*]} " != *" $release "* ]]; then suites+=("$release"); fi
done
architectures=(amd64 arm64)
archive_key=snowflake_pg-archive-keyring

# The signing key: the one asked for, or the only secret key there is.
mapfile -t secret_keys < <(gpg --batch --quiet --no-auto-check-trustdb --with-colons --list-secret-keys ${key:+"$key"} 2>/dev/null |
  awk -F: '$1 == "sec" { primary = 1 } $1 == "fpr" && primary { print $10; primary = 0 }')
if [[ -n $key ]]; then
  ((${#secret_keys[@]} == 1)) || fail "no secret key $key (or more than one) in ${GNUPGHOME:-~/.gnupg}"
else
  ((${#secret_keys[@]} == 1)) ||
    fail "--key KEYID needed: ${GNUPGHOME:-~/.gnupg} holds ${#secret_keys[@]} secret keys (${secret_keys[*]:-none})"
fi
key=${secret_keys[0]}

# OUT: refused if it holds anything an earlier run did not write.
if [[ -e $out ]]; then
  strays=$(find "$out" -mindepth 1 -maxdepth 1 ! -name dists ! -name pool ! -name "$archive_key.gpg" ! -name "$archive_key.asc")
  [[ -z $strays ]] || fail "$out holds files that are no apt repository of this script's: $(head -n 3 <<<"$strays")"
fi
mkdir -p "$(dirname "$out")"
new=$(cd "$(mktemp -d "$out.new.XXXXXX")" && pwd)
trap 'rm -rf "$new"' EXIT
chmod 755 "$new" # mktemp's 700 would keep a web server of another user out
pool=pool/main/s/snowflake-pg
mkdir -p "$new/$pool"

# The packages, into the pool, each noted for the suites whose glibc its library fits.
declare -A members=() # "SUITE ARCH" -> the pool paths of its packages, space-separated
library=$new/library.so
count=0
for dir in "${files_dirs[@]}"; do
  [[ -d $dir ]] || fail "no directory $dir"
  for deb in "$dir"/*.deb; do
    [[ -f $deb ]] || fail "$dir holds no .deb file"
    name=$(basename "$deb") package=$(dpkg-deb -f "$deb" Package) arch=$(dpkg-deb -f "$deb" Architecture)
    [[ $package =~ ^postgresql-([0-9]+)-snowflake-pg$ ]] || fail "$name is no package of snowflake_pg ($package)"
    pg=${BASH_REMATCH[1]}
    [[ " ${architectures[*]} " == *" $arch "* ]] || fail "$name is for $arch, not one of ${architectures[*]}"
    # The same file name from two directories must be the same package.
    if [[ -e $new/$pool/$name ]]; then
      cmp -s "$deb" "$new/$pool/$name" || fail "two different $name: in $dir and another directory given"
      continue
    fi
    cp "$deb" "$new/$pool/$name"
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/lib/postgresql/$pg/lib/snowflake_pg.so" >"$library" ||
      fail "$name holds no usr/lib/postgresql/$pg/lib/snowflake_pg.so"
    [[ -n $(glibc_needed "$library") ]] || fail "the library of $name names no glibc version"
    for suite in "${suites[@]}"; do
      if glibc_fits "$library" "$suite"; then members["$suite $arch"]+=" $pool/$name"; fi
    done
    count=$((count + 1))
  done
done
rm -f "$library"

# The index files: one scan of the pool, each suite and architecture taking its packages'
# entries from it (apt-ftparchive scans directories, not lists of files).
cd "$new"
entries=$(apt-ftparchive packages pool)
for suite in "${suites[@]}"; do
  summary=
  for arch in "${architectures[@]}"; do
    index=dists/$suite/main/binary-$arch
    mkdir -p "$index"
    awk -v wanted="${members["$suite $arch"]:-}" '
      BEGIN { RS = ""; FS = "\n"; n = split(wanted, w, " "); for (i = 1; i <= n; i++) keep[w[i]] = 1 }
      { for (i = 1; i <= NF; i++) if ($i ~ /^Filename: /) { if (substr($i, 11) in keep) printf "%s\n\n", $0; break } }' \
      <<<"$entries" >"$index/Packages"
    gzip -9n <"$index/Packages" >"$index/Packages.gz"
    summary+="${summary:+,} $(grep -c '^Package: ' "$index/Packages" || true) $arch"
  done
  apt-ftparchive -o APT::FTPArchive::Release::Origin=snowflake_pg -o APT::FTPArchive::Release::Label=snowflake_pg \
    -o APT::FTPArchive::Release::Suite="$suite" -o APT::FTPArchive::Release::Codename="$suite" \
    -o APT::FTPArchive::Release::Architectures="${architectures[*]}" -o APT::FTPArchive::Release::Components=main \
    -o APT::FTPArchive::Release::Description="snowflake_pg, the PostgreSQL extension, for Debian $suite" \
    release "dists/$suite" >"Release.$suite"
  mv "Release.$suite" "dists/$suite/Release"
  # SHA512 digests: apt refuses signatures made with SHA1.
  gpg --batch --yes --quiet --local-user "$key" --digest-algo SHA512 --clearsign --output "dists/$suite/InRelease" "dists/$suite/Release"
  gpg --batch --yes --quiet --local-user "$key" --digest-algo SHA512 --armor --detach-sign --output "dists/$suite/Release.gpg" "dists/$suite/Release"
  echo "$suite:$summary packages"
done

# The public key, and both signatures of every suite checked against it as apt will.
gpg --batch --export --export-options export-minimal "$key" >"$archive_key.gpg"
gpg --batch --armor --export --export-options export-minimal "$key" >"$archive_key.asc"
for suite in "${suites[@]}"; do
  if ! gpgv --keyring "$new/$archive_key.gpg" "dists/$suite/InRelease" 2>/dev/null ||
    ! gpgv --keyring "$new/$archive_key.gpg" "dists/$suite/Release.gpg" "dists/$suite/Release" 2>/dev/null; then
    fail "the signatures of $suite do not verify against the exported key $key"
  fi
done
cd - >/dev/null

rm -rf "$out" && mv "$new" "$out"
trap - EXIT
echo "apt repository in $out: $count packages, signed by $key; $(du -sk "$out" | cut -f1) kB"
