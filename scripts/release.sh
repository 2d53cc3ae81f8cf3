#!/usr/bin/env bash
# The steps of a release that GitHub Actions runs (.github/workflows/release.yml, and the
# first of them .github/workflows/ci.yml too), one subcommand each, so that the workflows
# hold no logic of their own: each runs here as it runs there, and shellcheck reads it.
#
#   machine              what a fresh Debian 12 container lacks that the README's two
#                        commands take as there, but Rust: gcc (Rust's linker) and curl;
#                        then checks that Rust 1.96 or later (pgrx's minimum; Debian 12's
#                        own rustc is far older) is on the PATH, with clippy and rustfmt,
#                        which the lint step runs: the workflows' step before this one
#                        installs it with rustup (a pinned action), and this machine has no
#                        way to fetch it itself; puts cargo's bin directory on the PATH of
#                        the workflow's later steps; and gives git's trust to this clone,
#                        which the runner's user owns, not root
#   check-tag [TAG]      TAG ($GITHUB_REF_NAME by default) is v<Cargo.toml's version>, the
#                        other version files agree, and CHANGELOG.md has a section headed
#                        with that version and a date ("## X.Y.Z - YYYY-MM-DD", not
#                        "Unreleased"): checked before hours of build
#   files OUT            every release file of both architectures into OUT, emptied first:
#                        scripts/package.sh for amd64 and for arm64 (each reusing the builds
#                        the tests made), then one SHA256SUMS over all of them
#   images FILES OUT     the container images of the tarballs in FILES (scripts/images.sh):
#                        OUT/snowflake_pg-<version>-pgN.oci.tar, each an amd64 and arm64 index
#   sign FILES APT       FILES/SHA256SUMS signed (FILES/SHA256SUMS.asc, detached, armored),
#                        the public key beside it (FILES/snowflake_pg-release-key.asc), and
#                        the signed apt repository of FILES' .deb files built in APT
#                        (scripts/apt-repository.sh), with the secret key in $RELEASE_GPG_KEY
#                        (armored, no passphrase) imported into a throwaway GNUPGHOME; the
#                        key's fingerprint must be the one SECURITY.md publishes, which
#                        users check the key against
#   publish FILES        the GitHub release of the tag ($GITHUB_REF_NAME) with every file of
#                        FILES, its notes the tag's CHANGELOG section ($GH_TOKEN; gh); a rerun
#                        replaces the files of a release already there
#   push-images IMAGES   each OCI archive of IMAGES to $REGISTRY/<owner>/<repository>
#                        ($GITHUB_REPOSITORY, lowercased), tagged <version>-pgN and, but for
#                        a pre-release, pgN; logged in as $GITHUB_ACTOR with $GH_TOKEN
#
# As root on Debian 12 (machine, files, images: where tests/run.sh ran; sign and
# push-images install gnupg and skopeo where missing); publish needs only gh.
# Usage: bash scripts/release.sh SUBCOMMAND [ARGS...]   (see above)
set -euo pipefail
# lib.sh speaks up at once where there is no Rust 1.96: true of every job but the build,
# and nothing the other subcommands need.
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" 2>/dev/null
usage="usage: release.sh machine | check-tag [TAG] | files OUT | images FILES OUT | sign FILES APT | publish FILES | push-images IMAGES"
fail() { echo "FAIL release: $*" >&2; exit 1; }

# changelog_section VERSION: CHANGELOG.md's section of VERSION, without its heading and
# the blank lines after it: from a heading "## VERSION - YYYY-MM-DD" or "## [VERSION] -
# YYYY-MM-DD" to the next "## ". A section whose heading has no date (the version still
# "Unreleased") is none.
changelog_section() {
  awk -v version="$1" '
    /^## / { if (found) exit; heading = $2; gsub(/[][]/, "", heading)
             found = heading == version && $3 == "-" && $4 ~ /^[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]$/; next }
    found && (started || NF) { started = 1; print }' "$SNOWFLAKE_PG_ROOT/CHANGELOG.md"
}

machine() {
  local cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin tool
  apt_install_missing ca-certificates curl gcc >/dev/null
  PATH=$cargo_bin:$PATH
  # Rust comes before this step, from rustup (the workflows' Rust step); lib.sh took the
  # default toolchain, or another of rustup's that is recent enough (rust_toolchain_select).
  command -v rustc >/dev/null ||
    fail "no Rust here: Rust $RUST_MIN_VERSION or later, with clippy and rustfmt, must come first (the workflows' Rust step; elsewhere rustup)"
  rust_toolchain_select 2>/dev/null ||
    fail "$(rustc --version) is older than $RUST_MIN_VERSION, which pgrx $PGRX_VERSION needs, and rustup has no newer toolchain here"
  for tool in cargo clippy-driver rustfmt; do
    "$tool" --version >/dev/null 2>&1 || fail "$(rustc --version) has no $tool: install its toolchain with the components clippy and rustfmt"
  done
  # Each step of a workflow is a shell of its own: GITHUB_PATH is how PATH carries over.
  if [[ -n ${GITHUB_PATH:-} ]]; then echo "$cargo_bin" >>"$GITHUB_PATH"; fi
  # A clone owned by another user (the runner's, in a container that runs as root) is
  # refused by git as dubious: the tests read its files and history with git.
  if ! git -C "$SNOWFLAKE_PG_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    git config --global --add safe.directory "$SNOWFLAKE_PG_ROOT"
  fi
  git -C "$SNOWFLAKE_PG_ROOT" rev-parse --git-dir >/dev/null || fail "$SNOWFLAKE_PG_ROOT is no git clone (checkout needs git installed before it)"
  echo "ok machine: $(rustc --version), $(cargo --version), $(gcc --version | head -n 1), $(git --version)"
}

check_tag() {
  local tag=${1:-${GITHUB_REF_NAME:-}} version notes
  version=$(extension_version)
  [[ $tag == "v$version" ]] || fail "the tag ${tag:-(none)} is not v$version, the version of Cargo.toml"
  # The other places of the version (docs/packaging.md, "Making a release").
  grep -qx "version = \"$version\"" "$SNOWFLAKE_PG_ROOT/snowflake_core/Cargo.toml" || fail "snowflake_core/Cargo.toml is not at $version"
  grep -qF "\"version\": \"$version\"" "$SNOWFLAKE_PG_ROOT/META.json" || fail "META.json is not at $version"
  grep -qx "default_version = '$version'" "$SNOWFLAKE_PG_ROOT/sql_edition/snowflake_sql.control" ||
    fail "sql_edition/snowflake_sql.control is not at $version"
  # (Into a variable, not into grep -q: that would end awk early, failing the pipe.)
  notes=$(changelog_section "$version")
  [[ $notes == *[![:space:]]* ]] ||
    fail "CHANGELOG.md has no section headed \"## $version - YYYY-MM-DD\" (a dated heading, not \"Unreleased\")"
  echo "ok check-tag: $tag is the version of Cargo.toml and the other version files, with a CHANGELOG section"
}

files() {
  local out=${1:?$usage} parts=$SNOWFLAKE_PG_ROOT/target/release-parts arch file name sums
  rm -rf "$out" "$parts" && mkdir -p "$out"
  # Two directories, as each run of package.sh empties its own and writes its SHA256SUMS;
  # both have the SQL edition's files, which must be the same. In the clone: the arm64
  # run goes on in the build root, which sees the clone and little else of this machine.
  RELEASE_FILES_DIR=$parts/amd64 bash "$SNOWFLAKE_PG_ROOT/scripts/package.sh"
  RELEASE_FILES_DIR=$parts/arm64 bash "$SNOWFLAKE_PG_ROOT/scripts/package.sh" --arch arm64
  for arch in amd64 arm64; do
    (cd "$parts/$arch" && sha256sum --check --quiet SHA256SUMS) || fail "a file of $parts/$arch does not match its SHA256SUMS"
    for file in "$parts/$arch"/*; do
      name=$(basename "$file")
      [[ $name != SHA256SUMS ]] || continue
      if [[ -e $out/$name ]]; then
        cmp -s "$file" "$out/$name" || fail "two different $name, of amd64's run and of arm64's"
      else
        cp "$file" "$out/$name"
      fi
    done
  done
  sums=$(cd "$out" && sha256sum -- *)
  echo "$sums" >"$out/SHA256SUMS"
  rm -rf "$parts"
  echo "ok files: $(($(wc -l <"$out/SHA256SUMS"))) release files and SHA256SUMS in $out"
}

images() {
  local dir=${1:?$usage} out=${2:?$usage} tarball major tarballs=()
  shopt -s nullglob
  for tarball in "$dir"/snowflake_pg-"$(extension_version)"-pg*-linux-gnu.tar.gz; do
    # Image volumes need extension_control_path, PostgreSQL 18's: images.sh refuses the
    # tarballs of older majors.
    major=${tarball##*-pg} major=${major%%-*}
    if ((major >= 18)); then tarballs+=("$tarball"); fi
  done
  ((${#tarballs[@]})) || fail "no tarball of $(extension_version) for PostgreSQL 18 or later in $dir"
  rm -rf "$out"
  # The images' org.opencontainers.image.source: the repository, which the registry then
  # shows each image's package under.
  IMAGE_SOURCE=${IMAGE_SOURCE:-${GITHUB_SERVER_URL:+$GITHUB_SERVER_URL/${GITHUB_REPOSITORY:-}}} \
    bash "$SNOWFLAKE_PG_ROOT/scripts/images.sh" "$out" "${tarballs[@]}"
}

sign() {
  local dir=${1:?$usage} apt=${2:?$usage} keys key published
  [[ -n ${RELEASE_GPG_KEY:-} ]] ||
    fail "RELEASE_GPG_KEY is empty: the release key's armored secret key is a secret of the repository (its release environment)"
  apt_install_missing gnupg >/dev/null
  (cd "$dir" && sha256sum --check --quiet SHA256SUMS) || fail "a file of $dir does not match its SHA256SUMS"
  # A keyring of its own, gone when this ends (its agent too), whatever the outcome. Not a
  # local: the trap runs after the function has returned.
  home=$(mktemp -d)
  trap 'gpgconf --homedir "$home" --kill all 2>/dev/null || true; rm -rf "$home"' EXIT
  export GNUPGHOME=$home
  gpg --batch --quiet --import <<<"$RELEASE_GPG_KEY" || fail "RELEASE_GPG_KEY is no OpenPGP secret key gpg can import"
  mapfile -t keys < <(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "sec" { getline; print $10 }')
  ((${#keys[@]} == 1)) || fail "RELEASE_GPG_KEY holds ${#keys[@]} secret keys, not one"
  key=${keys[0]}
  # Users check the key against the fingerprint SECURITY.md publishes: a release signed by
  # another key would fail their check, so it is not made.
  published=$(published_fingerprint)
  [[ $key == "$published" ]] ||
    fail "RELEASE_GPG_KEY's key is $key; SECURITY.md publishes ${published:-no fingerprint} as the release key's: publish this key's fingerprint there first (docs/packaging.md, \"Making a release\")"
  gpg --batch --yes --quiet --local-user "$key" --digest-algo SHA512 --armor --detach-sign \
    --output "$dir/SHA256SUMS.asc" "$dir/SHA256SUMS" || fail "signing with $key failed (a key with a passphrase?)"
  gpg --batch --armor --export --export-options export-minimal "$key" >"$dir/snowflake_pg-release-key.asc"
  # Checked as a user would, against the exported public key alone.
  gpg --batch --dearmor <"$dir/snowflake_pg-release-key.asc" >"$home/public.gpg"
  gpgv --keyring "$home/public.gpg" "$dir/SHA256SUMS.asc" "$dir/SHA256SUMS" 2>/dev/null ||
    fail "SHA256SUMS.asc does not verify against the exported key $key"
  echo "ok sign: $dir/SHA256SUMS signed by $key"
  bash "$SNOWFLAKE_PG_ROOT/scripts/apt-repository.sh" "$apt" "$dir" --key "$key" --gnupghome "$home"
}

publish() {
  local dir=${1:?$usage} tag=${GITHUB_REF_NAME:?the tag} repo=${GITHUB_REPOSITORY:?owner/repository} version notes
  local options=()
  [[ -n ${GH_TOKEN:-} ]] || fail "GH_TOKEN is empty"
  [[ -f $dir/SHA256SUMS.asc ]] || fail "$dir/SHA256SUMS is not signed (no SHA256SUMS.asc)"
  (cd "$dir" && sha256sum --check --quiet SHA256SUMS) || fail "a file of $dir does not match its SHA256SUMS"
  version=$(extension_version)
  notes=$(mktemp)
  changelog_section "$version" >"$notes"
  [[ -s $notes ]] || fail "CHANGELOG.md has no section headed \"## $version\": the release would have no notes"
  # A version with a suffix (0.4.0-rc.1) is a pre-release, not shown as the latest.
  if [[ $version == *-* ]]; then options+=(--prerelease); fi
  if gh release view "$tag" --repo "$repo" >/dev/null 2>&1; then
    # A rerun of the workflow: the release is there, its files are replaced.
    gh release upload "$tag" --repo "$repo" --clobber "$dir"/*
  else
    gh release create "$tag" --repo "$repo" --verify-tag --title "snowflake_pg $version" \
      --notes-file "$notes" "${options[@]}" "$dir"/*
  fi
  rm -f "$notes"
  echo "ok publish: the release $tag of $repo has the $(find "$dir" -maxdepth 1 -type f | wc -l) files of $dir"
}

push_images() {
  local images=${1:?$usage} registry=${REGISTRY:?the registry host} repo=${GITHUB_REPOSITORY:?owner/repository}
  local version archive name major tag tags
  [[ -n ${GH_TOKEN:-} ]] || fail "GH_TOKEN is empty"
  apt_install_missing ca-certificates skopeo >/dev/null
  # Image names are lowercase; GitHub's owner and repository names need not be.
  repo=${repo,,} version=$(extension_version)
  shopt -s nullglob
  local archives=("$images"/snowflake_pg-"$version"-pg*.oci.tar)
  ((${#archives[@]})) || fail "no image archive of $version in $images"
  # The credentials in a file of this run's, removed when it ends, not in the user's (not
  # a local: the trap runs after the function has returned).
  auth=$(mktemp -d)
  trap 'rm -rf "$auth"' EXIT
  skopeo login --authfile "$auth/auth.json" --username "${GITHUB_ACTOR:?the user}" --password-stdin "$registry" <<<"$GH_TOKEN"
  for archive in "${archives[@]}"; do
    name=$(basename "$archive" .oci.tar) major=${name##*-}
    tags=("$version-$major")
    # The major's moving tag follows releases, never a pre-release.
    if [[ $version != *-* ]]; then tags+=("$major"); fi
    for tag in "${tags[@]}"; do
      # --all: the index and both architectures' images, not this machine's alone.
      skopeo copy --all --retry-times 3 --authfile "$auth/auth.json" "oci-archive:$archive" "docker://$registry/$repo:$tag"
      echo "ok push-images: $registry/$repo:$tag"
    done
  done
}

command=${1:-}
(($#)) && shift
case $command in
  machine) machine "$@" ;;
  check-tag) check_tag "$@" ;;
  files) files "$@" ;;
  images) images "$@" ;;
  sign) sign "$@" ;;
  publish) publish "$@" ;;
  push-images) push_images "$@" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
