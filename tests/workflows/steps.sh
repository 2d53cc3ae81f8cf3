#!/usr/bin/env bash
# Runs every step of the GitHub workflows (.github/workflows/*.yml), read from the files
# themselves (tests/workflows/steps.py), job by job in the order of their needs and step by
# step in order, each job as GitHub would run it in its container, debian:12: in a clean
# Debian 12 root (an overlay over the package test's clean bookworm root, thrown away
# after the job), as root, with GitHub's environment (HOME=/github/home, the workspace
# /__w/REPO/REPO owned by the runner's user, GITHUB_PATH and GITHUB_ENV carried from step
# to step), on a fresh clone of this tree (its working files as they stand), and no Rust.
# Every run: step runs as written (bash -e), but:
# - the step that runs the test command (bash .ci/run, bash tests/run.sh) is not run: CI
#   runs it, and this test is one of its steps. The steps after it in its job (the release
#   files and the images) run where it ran, in this clone on this machine, on what its
#   build and package steps left, as they would in the container after it;
# - steps that need the network beyond the package registries are stood in for, and the
#   test says which: the Rust download (the Rust action: this machine's rustup and its
#   toolchain of Rust 1.96 or later, copied in where the action puts its own), the
#   artifacts between jobs (a directory of this test's), the push of the images (the
#   step runs, with skopeo's pushes made into a local OCI layout instead of the registry),
#   the GitHub release (the step runs, with a gh that records what it would create) and
#   Pages (the artifact checked, not deployed);
# - a secret is a throwaway one: RELEASE_GPG_KEY a key made here, whose fingerprint is
#   written into SECURITY.md of each checkout, as the maintainer publishes the real one's;
# - the tag is v<Cargo.toml's version>. In a tree between releases (a version file not at
#   that version, or its CHANGELOG.md section without a date) check-tag must refuse it,
#   and the steps after it run all the same; the job that publishes the release gets that
#   section dated in its checkout, as the maintainer dates it before the tag.
# A job with no container (runs-on alone: the runner's own Ubuntu) runs in the same clean
# root. The checkout is a clone where the job's image has git by then, else the tree's
# files without .git, as actions/checkout downloads them there. Then, as a DBA would, the
# published files are checked as docs/packaging.md says (the release key against
# SECURITY.md's fingerprint, SHA256SUMS.asc by gpgv, the files by sha256sum), in a clean
# root too; and a changed SHA256SUMS must fail that check.
# Before any step: the Rust action is the same, pinned by commit, with the same toolchain
# (1.96 or later, with clippy and rustfmt) in every job that builds, and comes before the
# step that checks the machine. Each step prints its seconds.
# Usage: bash tests/workflows/steps.sh [WORKFLOW...]   (as root; every workflow by default;
#   after tests/run.sh's build, package and arm64 steps, whose builds the release files are
#   made of: alone, `release.sh files` builds what is missing)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
fail() { echo "FAIL workflow steps: $*" >&2; exit 1; }
test_began=$EPOCHREALTIME checked=$EPOCHREALTIME
ok() { echo "ok $* ($(seconds_since "$checked") s)"; checked=$EPOCHREALTIME; }
cd "$SNOWFLAKE_PG_ROOT"

bash tests/workflows.sh venv >/dev/null || fail "no virtual environment for the workflows' tools (tests/workflows.sh venv)"
WORKFLOWS_VENV=${WORKFLOWS_VENV:-/var/lib/snowflake_pg/workflows-venv}
workflows=("$@")
if ((${#workflows[@]} == 0)); then
  shopt -s nullglob
  workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
  shopt -u nullglob
fi
plan=$("$WORKFLOWS_VENV/bin/python" -B tests/workflows/steps.py "${workflows[@]}") || fail "the workflows hold what this test cannot run (above)"
declare -a plan_jobs plan_steps
declare -A job_image job_runs_on job_env step_job step_name step_kind step_text step_with step_env
eval "$plan"
version=$(extension_version)

# --- What the workflows must hold ----------------------------------------------------------
# The test command, which CI runs; the Rust action and its toolchain, one for every job.
test_command_re='^bash (\.ci/run|tests/run\.sh)$'
rust_action='' rust_toolchain=''
for n in "${plan_steps[@]}"; do
  [[ ${step_kind[$n]} == uses && ${step_text[$n]} == */rust-toolchain@* ]] || continue
  [[ ${step_text[$n]} =~ @[0-9a-f]{40}$ ]] || fail "${step_job[$n]}: ${step_text[$n]} is not pinned by a commit"
  [[ -z $rust_action || $rust_action == "${step_text[$n]}" ]] || fail "two Rust actions: $rust_action and ${step_text[$n]}"
  toolchain=${step_with[$n:toolchain]:-}
  [[ -z $rust_toolchain || $rust_toolchain == "$toolchain" ]] || fail "two Rust toolchains: $rust_toolchain and $toolchain"
  if [[ ! $toolchain =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || version_before "$toolchain" "$RUST_MIN_VERSION"; then
    fail "${step_job[$n]}: the Rust action's toolchain '$toolchain' is no pinned Rust $RUST_MIN_VERSION or later"
  fi
  [[ ${step_with[$n:components]:-} == *clippy* && ${step_with[$n:components]:-} == *rustfmt* ]] ||
    fail "${step_job[$n]}: the Rust action installs no clippy and rustfmt (components: ${step_with[$n:components]:-none})"
  rust_action=${step_text[$n]} rust_toolchain=$toolchain
done
for job in "${plan_jobs[@]}"; do
  rust_seen=false
  for n in "${plan_steps[@]}"; do
    [[ ${step_job[$n]} == "$job" ]] || continue
    if [[ ${step_kind[$n]} == uses && ${step_text[$n]} == */rust-toolchain@* ]]; then rust_seen=true; fi
    if [[ ${step_kind[$n]} == run && (${step_text[$n]} == *"release.sh machine"* || ${step_text[$n]} =~ $test_command_re) ]]; then
      $rust_seen || fail "$job: step '${step_name[$n]}' needs Rust, and no Rust step comes before it"
    fi
  done
done
[[ -n $rust_action ]] || fail "no workflow installs Rust (a pinned dtolnay/rust-toolchain step)"
ok "the workflows: ${#plan_jobs[@]} jobs, ${#plan_steps[@]} steps; Rust $rust_toolchain (clippy, rustfmt) by $rust_action, before every step that needs it"

# --- Where the jobs run ----------------------------------------------------------------------
roots=/var/lib/snowflake_pg/roots
work=$CLUSTERS_DIR/workflow-steps
store=$work/artifacts
gnupghome=$CLUSTERS_DIR/wf-gnupg # short: gpg-agent's socket path must fit in 107 bytes
root='' run='' mounts=()
# GitHub's names for the repository and the runner's user, stand-ins for what GitHub gives
# a run.
github_repository=example-owner/snowflake_pg runner_uid=1001
repo_name=${github_repository#*/}
cleanup() {
  local code=$?
  trap - EXIT
  trap '' INT TERM
  job_end || code=1
  if [[ -d $gnupghome ]]; then gpgconf --homedir "$gnupghome" --kill all 2>/dev/null || true; rm -rf "$gnupghome"; fi
  if ((code == 0)); then rm -rf "$work"; fi
  exit "$code"
}
# job_end: the job's root unmounted (its processes gone first) and its overlay thrown away.
job_end() {
  [[ -n $root ]] || return 0
  root_unmount "$root" "${mounts[@]}" || return 1
  rm -rf --one-file-system "$run"
  root='' mounts=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$work" && mkdir -p "$store"

# The package test's clean Debian 12 root (of PostgreSQL 15: debootstrap's minimal bookworm
# and Debian's postgresql-15, which the image lacks and no step here uses), made if missing.
clean=$(debian_server_root 15 amd64) || fail "no clean Debian 12 root"

# The throwaway release key, and the fingerprint SECURITY.md publishes in each checkout.
fingerprint=$(gpg_key_new "$gnupghome" "snowflake_pg workflow test key") || fail "gpg made no key"
[[ -n $fingerprint ]] || fail "gpg made no key"
release_gpg_key=$(gpg --homedir "$gnupghome" --batch --armor --export-secret-keys "$fingerprint")
grep -q '^Release key fingerprint: ' SECURITY.md || fail "SECURITY.md has no line \"Release key fingerprint: ...\""
# publish_fingerprint CHECKOUT JOB: the throwaway key's fingerprint in CHECKOUT's
# SECURITY.md; and, in a tree between releases, in a job that publishes the release, its
# CHANGELOG.md section of the version dated, as the maintainer dates it before the tag, so
# that the release is published as a release would be (check-tag, in another job, refuses
# the tree as it is).
publish_fingerprint() {
  local n
  sed -i "s/^Release key fingerprint: .*/Release key fingerprint: \`$fingerprint\` (this test's throwaway key)/" "$1/SECURITY.md"
  taggable && return 0
  for n in "${plan_steps[@]}"; do
    [[ ${step_job[$n]} == "$2" && ${step_text[$n]} == *"release.sh publish"* ]] || continue
    sed -i -E "s/^## \[?${version//./\\.}\]?( .*)?$/## $version - $(date -u +%F)/" "$1/CHANGELOG.md"
    echo "; CHANGELOG.md's section of $version dated: this tree is no release yet"
  done
}

# taggable: whether this tree is a release, as the tag workflow's check-tag must find it:
# every version file at Cargo.toml's version and a dated CHANGELOG.md section of it.
taggable() {
  grep -qx "version = \"$version\"" snowflake_core/Cargo.toml && grep -qF "\"version\": \"$version\"" META.json &&
    grep -qx "default_version = '$version'" sql_edition/snowflake_sql.control &&
    grep -qE "^## \[?${version//./\\.}\]? - [0-9]{4}-[0-9]{2}-[0-9]{2}\b" CHANGELOG.md
}

# in_job COMMAND...: COMMAND in the job's root as a step's process, with the step's
# environment (the array env).
in_job() { chroot "$root" /usr/bin/env -i -C "$workspace" "${env[@]}" "$@"; }

# The stand-ins of the network tools, put first on the PATH of a job's root.
stand_in_tools() {
  mkdir -p "$root/usr/local/bin" "$root/stand-in"
  cat >"$root/usr/local/bin/skopeo" <<'EOF'
#!/bin/sh
# The stand-in of tests/workflows/steps.sh: a login is recorded; a copy to docker://NAME:TAG
# goes, by the real skopeo, into a local OCI layout, /stand-in/registry/NAME, as tag TAG;
# anything else is the real skopeo's.
set -eu
case ${1:-} in
  login) cat >/dev/null; echo "skopeo $*" >>/stand-in/skopeo.log; echo "Login Succeeded! (stand-in)"; exit 0 ;;
  copy) ;;
  *) exec /usr/bin/skopeo "$@" ;;
esac
source= dest=
for arg in "$@"; do
  case $arg in
    oci-archive:*) source=$arg ;;
    docker://*) dest=${arg#docker://} ;;
  esac
done
[ -n "$dest" ] || exec /usr/bin/skopeo "$@"
echo "skopeo $*" >>/stand-in/skopeo.log
mkdir -p "/stand-in/registry/${dest%:*}"
exec /usr/bin/skopeo copy --all "$source" "oci:/stand-in/registry/${dest%:*}:${dest##*:}"
EOF
  cat >"$root/usr/local/bin/gh" <<'EOF'
#!/bin/sh
# The stand-in of tests/workflows/steps.sh: `gh release view` finds no release (none was
# made), `gh release create` and `upload` record their arguments and copy the files and
# notes into /stand-in/release/TAG.
set -eu
echo "gh $*" >>/stand-in/gh.log
[ "${1:-}" = release ] || { echo "gh stand-in: only gh release" >&2; exit 1; }
[ -n "${GH_TOKEN:-}" ] || { echo "gh stand-in: no GH_TOKEN" >&2; exit 4; }
action=$2 tag=$3; shift 3
case $action in
  view) exit 1 ;;
  create | upload)
    dir=/stand-in/release/$tag; mkdir -p "$dir"
    while [ $# -gt 0 ]; do
      case $1 in
        --notes-file) cp "$2" "$dir/notes.md"; shift 2 ;;
        --repo | --title) echo "$1 $2" >>"$dir/options"; shift 2 ;;
        --*) echo "$1" >>"$dir/options"; shift ;;
        *) cp "$1" "$dir/"; shift ;;
      esac
    done ;;
  *) echo "gh stand-in: no gh release $action" >&2; exit 1 ;;
esac
EOF
  chmod 755 "$root/usr/local/bin/skopeo" "$root/usr/local/bin/gh"
}

# artifact_files WORKSPACE PATHS: the files the lines of PATHS name under WORKSPACE (globs,
# directories whole), each with its path below the longest common directory of what the
# lines name (a directory itself, a file's directory), as upload-artifact keeps them:
# "FILE<TAB>RELATIVE" lines.
artifact_files() {
  local ws=$1 line file base found=() tops=()
  while read -r line; do
    [[ -n $line ]] || continue
    for file in "$ws"/$line; do
      if [[ -d $file ]]; then
        tops+=("${file%/}") && mapfile -t -O "${#found[@]}" found < <(find "$file" -type f | sort)
      elif [[ -f $file ]]; then
        tops+=("$(dirname "$file")") && found+=("$file")
      fi
    done
  done <<<"$2"
  ((${#found[@]})) || return 0
  base=${tops[0]}
  for file in "${tops[@]}"; do while [[ $file != "$base" && $file != "$base"/* ]]; do base=$(dirname "$base"); done; done
  for file in "${found[@]}"; do printf '%s\t%s\n' "$file" "${file#"$base"/}"; done
}

# --- The jobs ------------------------------------------------------------------------------
stood_in=() skipped=()
for job in "${plan_jobs[@]}"; do
  workflow=${job%%:*}
  image=${job_image[$job]} where=root
  run=$roots/run-workflows root=$run/root
  root_overlay "$clean" "$run" || fail "no overlay over $clean"
  workspace=/__w/$repo_name/$repo_name
  temp=/__w/_temp
  mkdir -p "$root$workspace" "$root$temp" "$root/github/home"
  chown "$runner_uid:$runner_uid" "$root$workspace"
  ref_name=main
  [[ $workflow != release.yml ]] || ref_name=v$version
  base_env=(HOME=/github/home CI=true GITHUB_ACTIONS=true GITHUB_WORKSPACE="$workspace" RUNNER_TEMP="$temp"
    RUNNER_OS=Linux GITHUB_REPOSITORY="$github_repository" GITHUB_REPOSITORY_OWNER="${github_repository%%/*}"
    GITHUB_SERVER_URL=https://github.com GITHUB_ACTOR=example-actor GITHUB_REF_NAME="$ref_name"
    GITHUB_REF="refs/$([[ $ref_name == v* ]] && echo tags || echo heads)/$ref_name" GITHUB_EVENT_NAME=push)
  path_extra=() env_added=()
  mapfile -t job_vars <<<"${job_env[$job]}"
  container="in a clean Debian 12 root as its container, $image"
  [[ -n $image ]] || container="in a clean Debian 12 root (the job runs on the runner, ${job_runs_on[$job]}: the nearest here)"
  echo "== $job: $container"
  [[ -z $image || $image == debian:12 ]] || fail "$job runs in $image: this test has Debian 12 roots only"
  for n in "${plan_steps[@]}"; do
    [[ ${step_job[$n]} == "$job" ]] || continue
    name=${step_name[$n]} text=${step_text[$n]}
    # The step's environment: GitHub's, the workflow's and job's, what earlier steps added
    # (GITHUB_ENV), the step's own; expressions given their stand-ins.
    path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    for ((i = ${#path_extra[@]} - 1; i >= 0; i--)); do path=${path_extra[i]}:$path; done
    mapfile -t step_vars <<<"${step_env[$n]}"
    env=("${base_env[@]}" "PATH=$path")
    for var in "${job_vars[@]}" "${env_added[@]}" "${step_vars[@]}"; do
      [[ -n $var ]] || continue
      # shellcheck disable=SC2016 # the expressions are the workflow's text, not the shell's
      case ${var#*=} in
        '${{ secrets.RELEASE_GPG_KEY }}') var=${var%%=*}=$release_gpg_key ;;
        '${{ github.token }}') var=${var%%=*}=stand-in-token ;;
        '${{ '*) fail "$job: ${var%%=*} is the expression ${var#*=}, which this test has no stand-in for" ;;
      esac
      env+=("$var")
    done
    : >"$root$temp/add_path" && : >"$root$temp/set_env"
    env+=(GITHUB_PATH="$temp/add_path" GITHUB_ENV="$temp/set_env")
    log=$work/step-$n.log
    if [[ ${step_kind[$n]} == uses ]]; then
      action=${text%@*}
      case $action in
        actions/checkout)
          fetch_depth=${step_with[$n:fetch-depth]:-1}
          # The runner has git; a container has what its image and the steps before put in it.
          if [[ -z $image || -x $root/usr/bin/git ]]; then
            clone_fresh "$root$workspace" "$fetch_depth" || fail "$job: no clone of the tree into $workspace"
            how="a clone, its whole history"
            [[ $fetch_depth == 0 ]] || how="a clone of depth $fetch_depth"
          else
            rm -rf "${root:?}$workspace" && mkdir -p "$root$workspace"
            tree_files | tar --null -T - -cf - | tar -x -C "$root$workspace"
            how="the tree's files without .git (the image has no git: actions/checkout downloads them so)"
          fi
          # The runner's user owns the workspace, the checkout's files are root's.
          chown "$runner_uid:$runner_uid" "$root$workspace"
          dated=$(publish_fingerprint "$root$workspace" "$job")
          ok "$job: ${name}: $how in $workspace (the emulated checkout; SECURITY.md given the throwaway key's fingerprint$dated)" ;;
        dtolnay/rust-toolchain)
          toolchain=
          for candidate in $(rustup toolchain list 2>/dev/null | awk '{ print $1 }'); do
            if rust_new_enough "+$candidate"; then toolchain=$candidate && break; fi
          done
          [[ -n $toolchain ]] || fail "$job: this machine's rustup has no Rust $RUST_MIN_VERSION or later to stand in for Rust ${step_with[$n:toolchain]}"
          rustup_home=${RUSTUP_HOME:-$HOME/.rustup} cargo=/github/home/.cargo
          mkdir -p "$root$cargo/bin" "$root/github/home/.rustup/toolchains/$toolchain"
          cp "$(command -v rustup)" "$root$cargo/bin/rustup"
          for proxy in cargo cargo-clippy cargo-fmt clippy-driver rustc rustdoc rustfmt; do ln -sf rustup "$root$cargo/bin/$proxy"; done
          mount --bind -o ro "$rustup_home/toolchains/$toolchain" "$root/github/home/.rustup/toolchains/$toolchain" ||
            fail "$job: could not mount the toolchain $toolchain"
          mounts+=("$root/github/home/.rustup/toolchains/$toolchain")
          printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "minimal"\n' "$toolchain" >"$root/github/home/.rustup/settings.toml"
          # What the action writes for the steps after it.
          printf '%s\n' "CARGO_HOME=$cargo" CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=always >>"$root$temp/set_env"
          echo "$cargo/bin" >>"$root$temp/add_path"
          stood_in+=("$job: $name (the Rust download: this machine's rustup with its toolchain $toolchain, $(rustc "+$toolchain" --version | awk '{ print $2 }'), in /github/home as the action installs Rust $rust_toolchain there)")
          ok "$job: ${name}: STOOD IN FOR by this machine's $toolchain ($(rustc "+$toolchain" --version)), in \$HOME/.cargo and \$HOME/.rustup as the action puts its own" ;;
        actions/upload-artifact | actions/upload-pages-artifact)
          artifact=${step_with[$n:name]:-github-pages}
          ws=$root$workspace
          [[ $where == root ]] || ws=$SNOWFLAKE_PG_ROOT
          upload=$(artifact_files "$ws" "${step_with[$n:path]:?$job: an upload without path}")
          [[ -n $upload ]] || fail "$job: ${name}: no file at ${step_with[$n:path]} (if-no-files-found: ${step_with[$n:if-no-files-found]:-warn})"
          [[ ! -e $store/$artifact ]] || fail "$job: ${name}: an artifact $artifact is there already"
          while IFS=$'\t' read -r file relative; do
            mkdir -p "$(dirname "$store/$artifact/$relative")" && cp "$file" "$store/$artifact/$relative"
          done <<<"$upload"
          stood_in+=("$job: $name (an upload to GitHub: kept in a directory of this test)")
          ok "$job: ${name}: STOOD IN FOR: $(wc -l <<<"$upload") files kept as the artifact $artifact" ;;
        actions/download-artifact)
          artifact=${step_with[$n:name]:?$job: a download without name}
          [[ -d $store/$artifact ]] || fail "$job: ${name}: no artifact $artifact was uploaded before"
          mkdir -p "$root$workspace/${step_with[$n:path]:-.}"
          cp -a "$store/$artifact/." "$root$workspace/${step_with[$n:path]:-.}/"
          stood_in+=("$job: $name (a download from GitHub: from this test's directory)")
          ok "$job: ${name}: STOOD IN FOR: the artifact $artifact into ${step_with[$n:path]:-.}" ;;
        actions/deploy-pages)
          pages=$store/github-pages
          [[ -f $pages/snowflake_pg-archive-keyring.gpg ]] || fail "$job: the Pages artifact has no snowflake_pg-archive-keyring.gpg"
          for suite in bookworm trixie sid experimental; do
            [[ -f $pages/dists/$suite/InRelease ]] || fail "$job: the Pages artifact has no dists/$suite/InRelease"
          done
          stood_in+=("$job: $name (the deployment to GitHub Pages: its artifact checked, not deployed)")
          ok "$job: ${name}: STOOD IN FOR: the apt repository it would deploy has the keyring and each suite's InRelease" ;;
        *) fail "$job: ${name}: the action $action is one this test does not know how to stand in for" ;;
      esac
    elif [[ $text =~ $test_command_re ]]; then
      skipped+=("$job: $name ($text: CI's own run, of which this test is a step)")
      ok "$job: ${name}: NOT RUN: $text is the test command, which CI runs (this test is one of its steps); the steps after it run where it ran, in $SNOWFLAKE_PG_ROOT"
      where=host
    elif [[ $where == host ]]; then
      host_env=()
      for var in "${env[@]}"; do [[ $var == PATH=* || $var == HOME=* || $var == GITHUB_PATH=* || $var == GITHUB_ENV=* ]] || host_env+=("$var"); done
      env -C "$SNOWFLAKE_PG_ROOT" "${host_env[@]}" GITHUB_WORKSPACE="$SNOWFLAKE_PG_ROOT" bash -e -c "$text" >"$log" 2>&1 ||
        { cat "$log"; fail "$job: ${name}: '$text' failed (in $SNOWFLAKE_PG_ROOT, after the test command)"; }
      ok "$job: ${name}: $text (in $SNOWFLAKE_PG_ROOT, where the test command ran): $(tail -n 1 "$log")"
    else
      network=
      case $text in
        *"release.sh push-images"*) network="the push of the images to the registry: skopeo's copies to docker:// made into a local OCI layout" ;;
        *"release.sh publish"*) network="the GitHub release: gh records what it would create" ;;
      esac
      if [[ -n $network ]]; then stand_in_tools; fi
      printf '%s\n' "$text" >"$root$temp/step-$n.sh"
      if [[ $text == *"release.sh check-tag"* ]] && ! taggable; then
        # A tree between releases: the tag workflow would stop here, as it must; the steps
        # after it run all the same, to be tested.
        if in_job bash -e "$temp/step-$n.sh" >"$log" 2>&1; then fail "$job: ${name}: '$text' took v$version, which is no release yet"; fi
        ok "$job: ${name}: $text: REFUSED, as it must: this tree is no release (the version files or a dated CHANGELOG.md section of $version are missing): $(tail -n 1 "$log"); the steps after it run all the same"
        continue
      fi
      in_job bash -e "$temp/step-$n.sh" >"$log" 2>&1 || { cat "$log"; fail "$job: ${name}: '$text' failed in the root"; }
      if [[ -n $network ]]; then
        stood_in+=("$job: $name (run as written, but $network)")
        ok "$job: ${name}: $text: PARTLY STOOD IN FOR ($network): $(tail -n 1 "$log")"
      else
        ok "$job: ${name}: $text: $(tail -n 1 "$log")"
      fi
    fi
    # What the step gave the steps after it.
    while read -r line; do [[ -z $line ]] || path_extra+=("$line"); done <"$root$temp/add_path"
    while read -r line; do [[ -z $line ]] || env_added+=("$line"); done <"$root$temp/set_env"
  done
  # The outcomes only the stand-ins can show, read before the root goes.
  if [[ -d $root/stand-in/registry ]]; then
    pushed=$(cd "$root/stand-in/registry" && for layout in */*/*; do
      for tag in $(python3 -c 'import json, sys; [print(m["annotations"]["org.opencontainers.image.ref.name"]) for m in json.load(open(sys.argv[1]))["manifests"]]' "$layout/index.json"); do
        echo "$layout:$tag"; done; done | sort)
    registry=$(sed -n 's/^REGISTRY=//p' <<<"${job_env[$job]}")
    [[ -n $registry ]] || fail "$job pushed images, and its env names no REGISTRY"
    wanted=$(for major in 18 19; do echo "$registry/$github_repository:$version-pg$major"; [[ $version == *-* ]] || echo "$registry/$github_repository:pg$major"; done | sort)
    [[ $pushed == "$wanted" ]] || fail "$job: pushed $(paste -sd ' ' <<<"$pushed"), not $(paste -sd ' ' <<<"$wanted")"
    for tag in $pushed; do
      platforms=$(chroot "$root" skopeo inspect --raw "oci:/stand-in/registry/${tag%:*}:${tag##*:}" |
        python3 -c 'import json, sys; print(" ".join(sorted(m["platform"]["architecture"] for m in json.load(sys.stdin)["manifests"])))')
      [[ $platforms == "amd64 arm64" ]] || fail "$job: $tag holds $platforms, not amd64 and arm64"
    done
    ok "$job: the stand-in registry holds $(wc -l <<<"$pushed") tags, each an index of amd64 and arm64: $(paste -sd ' ' <<<"$pushed")"
  fi
  if [[ -d $root/stand-in/release ]]; then
    rm -rf "$work/release" && cp -a "$root/stand-in/release" "$work/release"
    cp "$root$workspace/SECURITY.md" "$work/release/SECURITY.md"
  fi
  job_end || fail "$job: its root would not unmount"
done

# summary: the steps not run and those stood in for, then the test's last line.
summary() {
  echo "not run (CI runs it): ${#skipped[@]} step$( ((${#skipped[@]} == 1)) || echo s)"
  if ((${#skipped[@]})); then printf '  %s\n' "${skipped[@]}"; fi
  echo "stood in for (they need GitHub or the network beyond the package registries): ${#stood_in[@]} steps"
  if ((${#stood_in[@]})); then printf '  %s\n' "${stood_in[@]}"; fi
  echo "ok workflow steps: every run: step of ${workflows[*]} run in order, but the test command ($(seconds_since "$test_began") s)"
}

# --- What GitHub would have published, checked as a DBA checks it -------------------------------
published=$work/release/v$version
if [[ ! -d $published ]]; then
  [[ " ${workflows[*]} " != *release.yml* ]] || fail "no GitHub release v$version was made"
  summary
  exit 0
fi
# CHANGELOG.md's section of the version, its heading and the blank lines around it left out.
section=$(awk -v version="$version" '/^## / { if (found) exit; found = $2 == version; next } found' CHANGELOG.md)
trimmed() { sed -e '/./,$!d' | tac | sed -e '/./,$!d' | tac; }
[[ $(trimmed <"$published/notes.md") == "$(trimmed <<<"$section")" ]] ||
  fail "the release's notes are not CHANGELOG.md's section of $version"
listed=$(awk '{ print $2 }' "$published/SHA256SUMS" | sort)
held_files=$(find "$published" -maxdepth 1 -type f ! -name notes.md ! -name options ! -name SHA256SUMS ! -name SHA256SUMS.asc \
  ! -name snowflake_pg-release-key.asc -printf '%f\n' | sort)
[[ $listed == "$held_files" ]] ||
  fail "the release's files are not those of its SHA256SUMS: $(diff <(echo "$listed") <(echo "$held_files") | tail -n 5)"
[[ -f $published/SHA256SUMS.asc && -f $published/snowflake_pg-release-key.asc ]] || fail "the release has no SHA256SUMS.asc or no key"
ok "the GitHub release v$version (stand-in): $(wc -l <<<"$listed") files, SHA256SUMS, its signature and the key; its notes CHANGELOG.md's section of $version"

# The DBA's check (docs/packaging.md, "Checking the files"), in a clean root with gnupg, on a
# copy of the published files, then on one whose SHA256SUMS has changed.
run=$roots/run-workflows root=$run/root
root_overlay "$clean" "$run" || fail "no overlay over $clean"
in_root() { in_chroot "$root" "$@"; }
in_root sh -c 'apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gnupg' >"$work/dba-apt.log" 2>&1 ||
  { cat "$work/dba-apt.log"; fail "apt-get install gnupg failed in the clean root"; }
mkdir -p "$root/release" && cp "$published"/* "$root/release/" && rm -f "$root/release/notes.md" "$root/release/options"
# The commands of docs/packaging.md, "Checking the files", as the page has them, run in the
# directory of the files; the fingerprint `gpg --show-keys` shows among their output.
{ echo 'set -e' && echo 'cd /release' && doc_block docs/packaging.md checking-the-files; } >"$root/release/check.sh" ||
  fail "no commands of \"Checking the files\" in docs/packaging.md"
in_root sh /release/check.sh >"$work/dba.log" 2>&1 || { cat "$work/dba.log"; fail "the published files fail the check docs/packaging.md gives"; }
seen=$(grep -o -E '\b[0-9A-F]{40}\b' "$work/dba.log" | head -n 1)
published_in=$(SNOWFLAKE_PG_ROOT=$work/release published_fingerprint)
[[ $seen == "$published_in" && -n $seen ]] || fail "the release key's fingerprint is $seen; SECURITY.md publishes ${published_in:-none}"
good=$(grep -c ': OK$' "$work/dba.log")
sed -i '1s/^./0/' "$root/release/SHA256SUMS"
if in_root sh /release/check.sh >"$work/dba-changed.log" 2>&1; then fail "a changed SHA256SUMS passed the check"; fi
grep -q 'BAD signature' "$work/dba-changed.log" || { cat "$work/dba-changed.log"; fail "a changed SHA256SUMS failed otherwise than by a bad signature"; }
root_unmount "$root" "${mounts[@]}" || fail "the DBA's root would not unmount"
rm -rf --one-file-system "$run"
root='' mounts=()
ok "a DBA's check of the published files (docs/packaging.md): the key's fingerprint SECURITY.md's, gpgv's good signature on SHA256SUMS, $good files OK by sha256sum -c; a changed SHA256SUMS refused (BAD signature)"

summary
