#!/usr/bin/env bash
# The CloudNativePG extension images (scripts/images.sh) as CloudNativePG uses them, the
# files taken out of the image archives, not from the build tree:
# - each archive, snowflake_pg-<version>-pgN.oci.tar for N = 18 and 19 (the majors with
#   extension_control_path): its OCI layout read by hand (in Python: every blob's sha256
#   digest and size, index.json naming one image index tagged <version>-pgN, that index
#   naming an image for linux/amd64 and one for linux/arm64, each image's config of that
#   architecture with the layer's diff id and the labels of this version, its one layer
#   holding exactly /lib/snowflake_pg.so, the control file and SQL scripts in
#   /share/extension and the license in /licenses/snowflake_pg, owned by 0:0, files 644
#   and directories 755, the library an ELF file of that architecture), and by skopeo, the
#   tool that pushes it (`skopeo copy --all` out of the archive checks every digest again;
#   `skopeo inspect --override-arch A` resolves each platform's image);
# - each image's layer unpacked into a directory of its own, as CloudNativePG mounts an
#   image volume (read-only, owned by root: the server reads it as another user);
# - then for each major, where that PostgreSQL runs (18 here, 19 in the build root), a
#   server configured as CloudNativePG configures one for the image of its own major and
#   this machine's architecture, DIR being that directory:
#     extension_control_path = '$system:DIR/share'
#     dynamic_library_path = '$libdir:DIR/lib'
#     shared_preload_libraries = 'snowflake_pg'
#   with no snowflake_pg in the server's own directories (the build the other tests
#   installed there is hidden: below), so that DIR is the only place it can come from. It
#   must start with the library mapped from DIR/lib (the postmaster's /proc/PID/maps),
#   list the extension as available (on 19, from DIR/share/extension: its `location`),
#   CREATE EXTENSION it, mint under pgbench (8 clients, then a new connection per
#   transaction) into a table keyed by snowflake_next() with no duplicate and no failed
#   transaction, and report itself preloaded in snowflake_status;
# - and must refuse, with PostgreSQL's own error naming the file, the image of the other
#   architecture (glibc skips a library of another machine as if it were absent: "cannot
#   open shared object file: No such file or directory", for a file that is there) and the
#   image of the other major (the server's magic-block check: "incompatible library ...
#   version mismatch", "Server is version N, library is version M"; or, where this
#   machine's glibc is older than that library needs, as 19's amd64 library needs 2.39 and
#   Debian 12 has 2.36, the dynamic linker's "version `GLIBC_2.39' not found"): at start
#   when preloaded, and at CREATE EXTENSION when not.
# The whole test runs in a mount namespace of its own (unshare), where the server's own
# directories (pkglibdir, sharedir/extension) are overlays with every snowflake_pg file
# whited out and the unpacked images are mounted read-only: nothing of it is seen by the
# other steps of a test run, which use those servers and their installed build meanwhile,
# and it all goes when the test ends.
# The archives are built by scripts/images.sh from the release tarballs of 18 and 19 for
# this machine's architecture (target/release-files-pgN: tests/package.sh N) and for arm64
# (target/release-files-arm64-pgN: scripts/package.sh --arch arm64 N) into target/images;
# with IMAGES_DIR set, the archives there are taken as they are (built elsewhere, or to be
# pushed). Every check prints its seconds.
# Usage: bash tests/images.sh [MAJOR...]   (as root; the servers of 18 and 19 by default)
# (It runs itself as `tests/images.sh --cluster MAJOR` where that major's server runs.)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
fail() { echo "FAIL images: $*" >&2; exit 1; }
test_began=$EPOCHREALTIME checked=$EPOCHREALTIME
# ok MESSAGE: a check passed, with its seconds (since the check before it).
ok() { echo "ok $* ($(seconds_since "$checked") s)"; checked=$EPOCHREALTIME; }

cd "$SNOWFLAKE_PG_ROOT"
version=$(extension_version)
# The majors with images: those with extension_control_path, 18 and later.
image_majors=()
for v in "${PG_VERSIONS[@]}"; do ((v < 18)) || image_majors+=("$v"); done
host_arch=$(dpkg --print-architecture)
declare -A other_arch_of=([amd64]=arm64 [arm64]=amd64)
other_arch=${other_arch_of[$host_arch]:-}
# Each image's layer unpacked, as CloudNativePG mounts it: VOLUMES/pgN-ARCH.
volumes=$CLUSTERS_DIR/images-volumes

# other_major V: the image major that is not V, whose image V's server must refuse.
other_major() {
  local v
  for v in "${image_majors[@]}"; do [[ $v == "$1" ]] || { echo "$v"; return 0; }; done
  return 1
}

# cnpg_settings DIR PRELOAD: the settings CloudNativePG gives a server for an image
# volume mounted at DIR, the library preloaded (PRELOAD true) or not (false).
cnpg_settings() {
  echo "extension_control_path = '\$system:$1/share'"
  echo "dynamic_library_path = '\$libdir:$1/lib'"
  if $2; then echo "shared_preload_libraries = 'snowflake_pg'"; else echo "shared_preload_libraries = ''"; fi
}

# --- The servers: bash tests/images.sh --cluster V (where PostgreSQL V runs) ---------------
if [[ ${1:-} == --cluster ]]; then
  pg=${2:?usage: images.sh --cluster MAJOR}
  pg_config=$(pg_config_of "$pg")
  libdir=$("$pg_config" --pkglibdir) extdir=$("$pg_config" --sharedir)/extension
  own=$(find "$libdir" "$extdir" -maxdepth 1 -name 'snowflake_pg*' -print)
  [[ -z $own ]] || fail "the server's own directories hold snowflake_pg files, so the image's could not be told from them: $own"
  ok "PostgreSQL $pg's own $libdir and $extdir hold no snowflake_pg file"
  name=images$pg refused=images$pg-refused
  trap 'cluster_stop "$name"; cluster_stop "$refused"' EXIT

  # The server of CloudNativePG's configuration, with the image of its major and machine.
  dir=$volumes/pg$pg-$host_arch
  cluster_init "$name" "$pg"
  mapfile -t settings < <(cnpg_settings "$dir" true)
  cluster_configure "$name" "${settings[@]}"
  cluster_launch "$name" $((6680 + pg)) || fail "the server with the $host_arch image of $pg did not start"
  shown=$(sql "$name" "SELECT current_setting('extension_control_path') || ' ' || current_setting('dynamic_library_path') || ' ' || current_setting('shared_preload_libraries')")
  [[ $shown == "\$system:$dir/share \$libdir:$dir/lib snowflake_pg" ]] || fail "the server's settings are not CloudNativePG's: $shown"
  postmaster=$(head -n 1 "$(cluster_dir "$name")/data/postmaster.pid")
  mapped=$(grep -o '/[^ ]*snowflake_pg[^ ]*\.so' "/proc/$postmaster/maps" | sort -u)
  [[ $mapped == "$dir/lib/snowflake_pg.so" ]] || fail "the postmaster has not mapped $dir/lib/snowflake_pg.so, but: ${mapped:-nothing of snowflake_pg}"
  ok "PostgreSQL $pg started as CloudNativePG configures it ($shown); its postmaster maps the library from the image: $mapped"

  available=$(sql "$name" "SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake_pg'")
  [[ $available == "$version" ]] || fail "pg_available_extensions lists snowflake_pg as '$available', not version $version"
  where="the control file found through extension_control_path (the server has none of its own)"
  # 19 says where it found each control file; 18 has no such column.
  if [[ $(sql "$name" "SELECT count(*) FROM pg_attribute WHERE attrelid = 'pg_available_extensions'::regclass AND attname = 'location'") == 1 ]]; then
    location=$(sql "$name" "SELECT location FROM pg_available_extensions WHERE name = 'snowflake_pg'")
    [[ $location == "$dir/share/extension" ]] || fail "pg_available_extensions.location of snowflake_pg is $location, not $dir/share/extension"
    where="its location $location"
  fi
  sql "$name" "CREATE EXTENSION snowflake_pg" -c "CREATE TABLE minted (id bigint PRIMARY KEY DEFAULT snowflake_next(), client int NOT NULL)"
  installed=$(sql "$name" "SELECT extversion FROM pg_extension WHERE extname = 'snowflake_pg'")
  [[ $installed == "$version" ]] || fail "CREATE EXTENSION made version $installed, not $version"
  ok "pg_available_extensions lists snowflake_pg $version, $where; CREATE EXTENSION made $installed"

  # Minting under pgbench: 8 clients, then a new connection for every transaction, each
  # backend taking a slot and giving it back. The primary key refuses a duplicate id.
  clients=8 transactions=100
  echo "INSERT INTO minted (client) SELECT :client_id FROM generate_series(1, 10);" >"$(cluster_dir "$name")/insert.sql"
  for connect in "" -C; do
    read -r _ _ failed <<<"$(pgbench_run "$name" -c "$clients" -j 2 -t "$transactions" $connect -f "$(cluster_dir "$name")/insert.sql")" ||
      fail "pgbench $connect failed on the server of the image"
    ((failed == 0)) || fail "pgbench $connect: $failed failed transactions"
  done
  counts=$(sql "$name" "SELECT count(*) || ' ' || count(DISTINCT id) FROM minted")
  [[ $counts == "$((2 * clients * transactions * 10)) $((2 * clients * transactions * 10))" ]] ||
    fail "ids minted and distinct: $counts, not $((2 * clients * transactions * 10)) of each"
  preloaded=$(sql "$name" "SELECT preloaded FROM snowflake_status")
  [[ $preloaded == t ]] || fail "snowflake_status says preloaded = $preloaded"
  cluster_stop "$name"
  ok "pgbench: ${counts% *} ids from $((2 * clients * transactions)) transactions of $clients clients (the last $((clients * transactions)) each on a new connection), 0 failed, 0 duplicates; snowflake_status: preloaded"

  # refusal DIR PRELOAD: the server of CloudNativePG's configuration for the image in DIR
  # (one data directory, its settings appended anew each time: the last line wins) must
  # fail to start if PRELOAD, and CREATE EXTENSION must fail if not; prints the server's
  # errors. Its log then goes aside (refusals.log): PostgreSQL reports the magic block's
  # refusal with SQLSTATE XX000, which a test run's last step looks for in every server.log.
  refusal() {
    local dir=$1 preload=$2 log errors
    log=$(cluster_dir "$refused")/server.log
    [[ -d $(cluster_dir "$refused")/data ]] || cluster_init "$refused" "$pg"
    mapfile -t settings < <(cnpg_settings "$dir" "$preload")
    cluster_configure "$refused" "${settings[@]}"
    if $preload; then
      ! cluster_launch "$refused" $((6660 + pg)) >/dev/null 2>&1 || fail "the server started with the image in $dir"
      errors=$(grep -E '(FATAL|ERROR|DETAIL):' "$log" || true)
    else
      cluster_launch "$refused" $((6660 + pg)) || fail "the server without preload did not start"
      ! errors=$(sql "$refused" "CREATE EXTENSION snowflake_pg" 2>&1) || fail "CREATE EXTENSION worked with the image in $dir"
      cluster_stop "$refused"
    fi
    cat "$log" >>"$(cluster_dir "$refused")/refusals.log" && rm -f "$log"
    echo "$errors"
  }
  # expect ERRORS TEXT...: fails unless every TEXT is in ERRORS.
  expect() {
    local errors=$1 text; shift
    for text in "$@"; do
      [[ $errors == *"$text"* ]] || fail "PostgreSQL's error does not say '$text': ${errors:-(none)}"
    done
  }

  # The image of the other architecture.
  if [[ -n $other_arch ]]; then
    dir=$volumes/pg$pg-$other_arch
    said="could not load library \"$dir/lib/snowflake_pg.so\": $dir/lib/snowflake_pg.so: cannot open shared object file: No such file or directory"
    at_start=$(refusal "$dir" true)
    expect "$at_start" "FATAL:" "$said"
    at_create=$(refusal "$dir" false)
    expect "$at_create" "ERROR:" "$said"
    ok "the $other_arch image refused at start when preloaded and at CREATE EXTENSION when not: $(grep -m 1 -o 'could not load library.*' <<<"$at_start")"
  fi

  # The image of the other major.
  other=$(other_major "$pg") || fail "no other image major than $pg: ${image_majors[*]}"
  dir=$volumes/pg$other-$host_arch
  needed=$(glibc_needed "$dir/lib/snowflake_pg.so")
  here=$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')
  if [[ $(printf '%s\n' "$needed" "$here" | sort -V | tail -n 1) != "$here" ]]; then
    said=("could not load library \"$dir/lib/snowflake_pg.so\"" "version \`GLIBC_$needed' not found (required by $dir/lib/snowflake_pg.so)")
    why="its library needs glibc $needed, this machine has $here"
  else
    said=("incompatible library \"$dir/lib/snowflake_pg.so\": version mismatch" "Server is version $pg, library is version $other.")
    why="the magic block"
  fi
  at_start=$(refusal "$dir" true)
  expect "$at_start" "FATAL:" "${said[@]}"
  at_create=$(refusal "$dir" false)
  expect "$at_create" "ERROR:" "${said[@]}"
  ok "the image of PostgreSQL $other refused at start when preloaded and at CREATE EXTENSION when not ($why): $(printf '%s; ' "${said[@]}" | sed 's/; $//')"
  exit 0
fi

# --- The archives, checked, and their layers unpacked -------------------------------------
[[ $(id -u) == 0 ]] || fail "run it as root: it mounts, and runs the servers as postgres"
majors=("$@")
((${#majors[@]})) || majors=("${image_majors[@]}")
for pg in "${majors[@]}"; do
  [[ " ${image_majors[*]} " == *" $pg "* ]] || fail "no image of PostgreSQL $pg: images are of ${image_majors[*]}"
done
((${#image_majors[@]} >= 2)) || fail "the test needs the images of two majors, each server refusing the other's: ${image_majors[*]}"
[[ -n $other_arch ]] || fail "no images of this machine's architecture, $host_arch"
# Everything from here on in a mount namespace of this test's own.
if [[ -z ${IMAGES_NAMESPACE:-} ]]; then
  IMAGES_NAMESPACE=1 exec unshare --mount --propagation private bash "$(realpath "${BASH_SOURCE[0]}")" "$@"
fi

if [[ -n ${IMAGES_DIR:-} ]]; then
  images_dir=$IMAGES_DIR
else
  images_dir=$SNOWFLAKE_PG_ROOT/target/images tarballs=()
  for pg in "${image_majors[@]}"; do
    for arch in "$host_arch" "$other_arch"; do
      release_dir=$SNOWFLAKE_PG_ROOT/target/release-files-pg$pg made="bash tests/package.sh $pg"
      [[ $arch == "$host_arch" ]] || release_dir=$SNOWFLAKE_PG_ROOT/target/release-files-$arch-pg$pg made="bash scripts/package.sh --arch $arch $pg"
      tarball=$release_dir/snowflake_pg-$version-pg$pg-$arch-linux-gnu.tar.gz
      [[ -f $tarball ]] || fail "no $tarball: RELEASE_FILES_DIR=$release_dir $made makes it"
      tarballs+=("$tarball")
    done
  done
  rm -rf "$images_dir"
  bash scripts/images.sh "$images_dir" "${tarballs[@]}" >/dev/null || fail "scripts/images.sh failed"
  ok "scripts/images.sh wrote the archives of ${image_majors[*]} into $images_dir from ${#tarballs[@]} release tarballs"
fi

# The extension's files as the images must hold them: the control file, this version's
# install script, the install script of every frozen release, every upgrade script.
extension_files=(snowflake_pg.control "snowflake_pg--$version.sql")
for v in $(extension_versions); do extension_files+=("snowflake_pg--$v.sql"); done
for script in sql/snowflake_pg--*--*.sql; do extension_files+=("$(basename "$script")"); done

work=$(mktemp -d) mounts=()
# Unmounts what this test mounted, last first, before its work directory goes (the
# namespace would drop the mounts anyway); a mount still in use by a server left running
# is detached.
cleanup() {
  local code=$? i
  trap - EXIT
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}"; done
  rm -rf "$work"
  exit "$code"
}
trap cleanup EXIT
mount_at() { # mount_at DIR MOUNT-ARGS...: mounts on DIR, to be unmounted by cleanup
  local dir=$1; shift
  mount "$@" "$dir" && mounts+=("$dir")
}

rm -rf "$volumes" && mkdir -p "$volumes"
for pg in "${image_majors[@]}"; do
  archive=$images_dir/snowflake_pg-$version-pg$pg.oci.tar
  [[ -f $archive ]] || fail "no $archive"
  # The archive read as a registry client reads it, in Python, whose tarfile, json and
  # hashlib read the tars, the documents and the digests. Prints each architecture and
  # where it wrote that image's layer.
  layers=$(python3 - "$archive" "$work/pg$pg" "$version" "$pg" "$host_arch $other_arch" "${extension_files[@]}" <<'PYTHON'
import gzip, hashlib, io, json, os, re, sys, tarfile

archive, out, version, major, arches, *extension_files = sys.argv[1:]
arches = arches.split()
elf_machines = {"amd64": 62, "arm64": 183}
name = os.path.basename(archive)


def fail(problem):
    print(f"{name}: {problem}", file=sys.stderr)
    sys.exit(1)


def members(tar, what):
    """{path: data, or None for a directory} of a tar whose every member is owned by 0:0
    and is a file of mode 644 or a directory of mode 755."""
    found = {}
    for member in tar.getmembers():
        path = member.name.removeprefix("./").rstrip("/")
        if member.uid != 0 or member.gid != 0:
            fail(f"{what}: {path} is owned by {member.uid}:{member.gid}, not 0:0")
        if member.isdir() and member.mode == 0o755:
            found[path] = None
        elif member.isfile() and member.mode == 0o644:
            found[path] = tar.extractfile(member).read()
        else:
            fail(f"{what}: {path} is neither a file of mode 644 nor a directory of mode 755 (type {member.type!r}, mode {member.mode:o})")
    return found


with tarfile.open(archive) as tar:
    files = members(tar, "the archive")
blobs = {}
for path, data in files.items():
    if path in ("blobs", "blobs/sha256", "index.json", "oci-layout"):
        continue
    match = re.fullmatch(r"blobs/sha256/([0-9a-f]{64})", path)
    if not match or data is None:
        fail(f"{path} is none of an OCI layout's files")
    if hashlib.sha256(data).hexdigest() != match[1]:
        fail(f"{path} does not have the digest it is named by")
    blobs[match[1]] = data
if json.loads(files.get("oci-layout") or "{}") != {"imageLayoutVersion": "1.0.0"}:
    fail("no oci-layout of version 1.0.0")
used = set()


def blob(descriptor, media_type):
    """The blob of a descriptor of that media type, its digest and size checked."""
    digest = descriptor.get("digest", "")
    if descriptor.get("mediaType") != media_type:
        fail(f"{digest} is of media type {descriptor.get('mediaType')}, not {media_type}")
    data = blobs.get(digest.removeprefix("sha256:"))
    if not digest.startswith("sha256:") or data is None:
        fail(f"no blob {digest}")
    if len(data) != descriptor.get("size"):
        fail(f"{digest} is {len(data)} bytes, its descriptor says {descriptor.get('size')}")
    used.add(digest.removeprefix("sha256:"))
    return data


top = json.loads(files.get("index.json") or "{}")
if top.get("schemaVersion") != 2 or len(top.get("manifests", [])) != 1:
    fail(f"index.json does not name one image: {top}")
tag = top["manifests"][0].get("annotations", {}).get("org.opencontainers.image.ref.name")
if tag != f"{version}-pg{major}":
    fail(f"index.json tags it {tag}, not {version}-pg{major}")
index = json.loads(blob(top["manifests"][0], "application/vnd.oci.image.index.v1+json"))
platforms = [(m.get("platform", {}).get("os"), m.get("platform", {}).get("architecture")) for m in index.get("manifests", [])]
if sorted(platforms) != sorted(("linux", arch) for arch in arches):
    fail(f"the index names the platforms {platforms}, not linux/{' and linux/'.join(arches)}")
expected = {"lib", "share", "share/extension", "licenses", "licenses/snowflake_pg", "lib/snowflake_pg.so",
            "licenses/snowflake_pg/LICENSE", "licenses/snowflake_pg/copyright"}
expected |= {f"share/extension/{file}" for file in extension_files}
os.makedirs(out, exist_ok=True)
for descriptor in index["manifests"]:
    arch = descriptor["platform"]["architecture"]
    manifest = json.loads(blob(descriptor, "application/vnd.oci.image.manifest.v1+json"))
    config = json.loads(blob(manifest.get("config", {}), "application/vnd.oci.image.config.v1+json"))
    if len(manifest.get("layers", [])) != 1:
        fail(f"the {arch} image has {len(manifest.get('layers', []))} layers, not 1")
    layer = blob(manifest["layers"][0], "application/vnd.oci.image.layer.v1.tar+gzip")
    layer_tar = gzip.decompress(layer)
    if (config.get("os"), config.get("architecture")) != ("linux", arch):
        fail(f"the {arch} image's config is of {config.get('os')}/{config.get('architecture')}")
    if config.get("rootfs") != {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer_tar).hexdigest()]}:
        fail(f"the {arch} image's config does not name its layer's diff id: {config.get('rootfs')}")
    labels = config.get("config", {}).get("Labels", {})
    if (labels.get("org.opencontainers.image.title"), labels.get("org.opencontainers.image.version")) != ("snowflake_pg", version) \
            or f"PostgreSQL {major}" not in labels.get("org.opencontainers.image.description", ""):
        fail(f"the {arch} image's labels are not those of snowflake_pg {version} for PostgreSQL {major}: {labels}")
    with tarfile.open(fileobj=io.BytesIO(layer_tar)) as tar:
        found = members(tar, f"the {arch} layer")
    if set(found) != expected:
        fail(f"the {arch} layer lacks {sorted(expected - set(found))} and has {sorted(set(found) - expected)} too")
    library = found["lib/snowflake_pg.so"]
    machine = int.from_bytes(library[18:20], "little") if library[:4] == b"\x7fELF" else None
    if machine != elf_machines[arch]:
        fail(f"the {arch} layer's library is not an {arch} ELF file (e_machine {elf_machines[arch]}): e_machine {machine}")
    with open(os.path.join(out, f"layer-{arch}.tar.gz"), "wb") as file:
        file.write(layer)
    print(arch, os.path.join(out, f"layer-{arch}.tar.gz"))
if set(blobs) - used:
    fail(f"blobs that no descriptor names: {sorted(set(blobs) - used)}")
PYTHON
  ) || fail "$(basename "$archive") is not the image index it should be"
  # Each layer unpacked by tar as root, as a container runtime does: owners and modes kept.
  while read -r arch layer; do
    mkdir -p "$volumes/pg$pg-$arch"
    tar -xzf "$layer" -C "$volumes/pg$pg-$arch"
  done <<<"$layers"
  ok "$(basename "$archive") ($(du -k "$archive" | cut -f1) kB): an OCI layout whose index.json tags $version-pg$pg an image index of linux/$host_arch and linux/$other_arch; every blob's digest and size right; each image's config of its architecture, with its layer's diff id and the labels of version $version; each layer /lib/snowflake_pg.so (an ELF file of that architecture), /share/extension (${#extension_files[@]} files) and /licenses/snowflake_pg, all owned by 0:0, 644 and 755"
done

# skopeo, which pushes the archives, reads them: every blob again, and each platform's image.
apt_install_missing skopeo >/dev/null || fail "skopeo could not be installed"
for pg in "${image_majors[@]}"; do
  archive=$images_dir/snowflake_pg-$version-pg$pg.oci.tar
  skopeo copy --quiet --all "oci-archive:$archive" "oci:$work/copy-pg$pg:$version-pg$pg" >"$work/skopeo.log" 2>&1 ||
    { cat "$work/skopeo.log"; fail "skopeo copy --all oci-archive:$(basename "$archive") failed"; }
  for arch in "$host_arch" "$other_arch"; do
    seen=$(skopeo inspect --override-arch "$arch" "oci-archive:$archive" |
      python3 -c 'import json, sys; i = json.load(sys.stdin); print(i["Os"], i["Architecture"], i["Labels"]["org.opencontainers.image.version"], len(i["Layers"]))') ||
      fail "skopeo inspect --override-arch $arch oci-archive:$(basename "$archive") failed"
    [[ $seen == "linux $arch $version 1" ]] || fail "skopeo sees the $arch image of $(basename "$archive") as $seen, not linux $arch $version with 1 layer"
  done
done
ok "skopeo $(skopeo --version | awk '{ print $3 }') copies each archive whole (copy --all: every blob's digest checked again) and finds its linux/$host_arch and linux/$other_arch images, version $version, one layer each"

# The unpacked images read-only, as CloudNativePG mounts them; the server's own copy of the
# extension hidden: an overlay over each of its two directories, the snowflake_pg files
# deleted in it (whiteouts in a tmpfs). For a major of the build root, where its server
# runs: the root's own directories, and the images as the root sees them (its bind mount of
# the clusters' directory, which a bind mount here does not reach).
read_only() { mount_at "$1" --bind "$1" && mount -o remount,bind,ro "$1"; }
read_only "$volumes"
mkdir -p "$work/overlays"
mount_at "$work/overlays" -t tmpfs tmpfs
hidden=0
for pg in "${majors[@]}"; do
  prefix=
  if in_build_root_major "$pg"; then
    build_root_mounted || fail "no build root for PostgreSQL $pg"
    prefix=$BUILD_ROOT
    read_only "$prefix$volumes"
  fi
  pg_config=$(pg_config_of "$pg")
  for dir in "$(on_major "$pg" "$pg_config" --pkglibdir)" "$(on_major "$pg" "$pg_config" --sharedir)/extension"; do
    hidden=$((hidden + 1))
    mkdir -p "$work/overlays/upper$hidden" "$work/overlays/work$hidden"
    mount_at "$prefix$dir" -t overlay overlay \
      -o "lowerdir=$prefix$dir,upperdir=$work/overlays/upper$hidden,workdir=$work/overlays/work$hidden"
    find "$prefix$dir" -maxdepth 1 -name 'snowflake_pg*' -delete
  done
done
ok "the unpacked images mounted read-only; the snowflake_pg files of PostgreSQL ${majors[*]}'s own directories hidden (overlays, seen in this test's mount namespace only)"

for pg in "${majors[@]}"; do
  on_major "$pg" bash tests/images.sh --cluster "$pg" || exit 1
  checked=$EPOCHREALTIME
done
echo "ok images test of PostgreSQL ${majors[*]} ($(seconds_since "$test_began") s)"
