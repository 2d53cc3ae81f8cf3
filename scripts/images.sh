#!/usr/bin/env bash
# Writes the CloudNativePG extension images of snowflake_pg from its release tarballs,
# without a container daemon or builder: for each PostgreSQL major N given, one OCI image
# archive, OUT/snowflake_pg-<version>-pgN.oci.tar, holding an image index with one image
# per architecture given (amd64 and arm64), as `skopeo copy --all oci-archive:FILE
# docker://REGISTRY/NAME:TAG` pushes it (see docs/kubernetes.md).
# Each image is the layout of CloudNativePG's image volume extensions (and of its own
# postgres-extensions-containers): FROM scratch, one layer holding
#   /lib/snowflake_pg.so
#   /share/extension/snowflake_pg.control and every snowflake_pg--*.sql of the tarball
#   /licenses/snowflake_pg/LICENSE and copyright (machine-readable, DEP 5)
# CloudNativePG mounts it at /extensions/<name> and appends <that>/share to
# extension_control_path and <that>/lib to dynamic_library_path: PostgreSQL 18 and later,
# the first with extension_control_path, so no other major is taken.
# CloudNativePG runs postgres as uid 26, not the files' owner: every file is owned by 0:0 and
# readable by all (644, directories 755). The layer is deterministic (names sorted, every
# file dated as the tarball's library, which package.sh dates by the source's last commit,
# gzip without a name or time), and so are the JSON blobs: the same tarballs make the same
# archive, byte for byte, and the same digests.
# The OCI image layout is written by hand (image-spec 1.1): blobs/sha256/<hex> for each
# layer, config, manifest and the index; index.json naming that index with the tag
# <version>-pgN (org.opencontainers.image.ref.name); oci-layout. Labels (config) and
# annotations (manifests, index): org.opencontainers.image.title, .description, .version,
# .created, .licenses, and .source when IMAGE_SOURCE gives it (the release workflow: the
# repository's URL); it is left out rather than guessed.
# Tarballs: snowflake_pg-<version>-pgN-<arch>-linux-gnu.tar.gz (scripts/package.sh), all of
# one version, at most one per major and architecture. Prints the path of each archive.
# Usage: bash scripts/images.sh OUT TARBALL...
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
usage="usage: images.sh OUT TARBALL...   (snowflake_pg-<version>-pgN-<arch>-linux-gnu.tar.gz, N 18 or later)"
out=${1:?$usage}
shift
(($#)) || { echo "$usage" >&2; exit 2; }

# The architectures of an image, as OCI names them (Debian's names are the same), and the
# ELF machine (e_machine) of each one's library: a tarball whose name says one and whose
# library is of the other would put a library into the image that no server of that
# architecture can load.
declare -A elf_machines=([amd64]=62 [arm64]=183)
# elf_machine FILE: the ELF machine of FILE (bytes 18-19, little-endian as both
# architectures' files are), or nothing if FILE is no ELF file.
elf_machine() {
  [[ $(od -A n -t x1 -N 4 "$1" 2>/dev/null) == " 7f 45 4c 46" ]] || return 0
  od -A n -t u2 -j 18 -N 2 "$1" | tr -d ' '
}

version='' majors=()
declare -A tarball_of=()
for tarball in "$@"; do
  name=$(basename "$tarball")
  [[ $name =~ ^snowflake_pg-([0-9].*)-pg([0-9]+)-([a-z0-9]+)-linux-gnu\.tar\.gz$ ]] ||
    { echo "images.sh: $name is no release tarball (snowflake_pg-<version>-pgN-<arch>-linux-gnu.tar.gz)" >&2; exit 2; }
  [[ -f $tarball ]] || { echo "images.sh: no file $tarball" >&2; exit 2; }
  v=${BASH_REMATCH[1]} pg=${BASH_REMATCH[2]} arch=${BASH_REMATCH[3]}
  [[ -z $version || $v == "$version" ]] || { echo "images.sh: tarballs of two versions, $version and $v" >&2; exit 2; }
  version=$v
  [[ -n ${elf_machines[$arch]:-} ]] || { echo "images.sh: $name is of $arch; the images are of amd64 and arm64" >&2; exit 2; }
  ((pg >= 18)) ||
    { echo "images.sh: $name is of PostgreSQL $pg, which has no extension_control_path: image volumes need 18 or later" >&2; exit 2; }
  [[ -z ${tarball_of[$pg $arch]:-} ]] || { echo "images.sh: two tarballs of PostgreSQL $pg on $arch" >&2; exit 2; }
  [[ " ${majors[*]} " == *" $pg "* ]] || majors+=("$pg")
  tarball_of[$pg $arch]=$(realpath "$tarball")
done

mkdir -p "$out"
work=$(mktemp -d "$out/.images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# dep5_copyright LICENSE: the machine-readable copyright file (DEP 5) of the license text
# LICENSE, as scripts/package.sh writes it into the Debian packages.
dep5_copyright() {
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: snowflake_pg"
  echo
  echo "Files: *"
  echo "Copyright: $(sed -n 's/^Copyright (c) //p' "$1")"
  echo "License: PostgreSQL"
  sed -e 's/^$/./' -e 's/^/ /' "$1"
}

# deterministic_tar DIR NAME... : a tar on stdout of NAME... under DIR, owned by 0:0,
# dated $mtime, in name order, in the plain ustar format (no extended headers, which would
# carry the time of building).
deterministic_tar() {
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" --format=ustar -C "$@" -cf -
}

# layer PG ARCH DIR: the layer of PG's ARCH image from its tarball in DIR/layer.tar.gz (and
# the tar it compresses, DIR/layer.tar, for its diff id); sets mtime to the tarball's.
layer() {
  local pg=$1 arch=$2 dir=$3 tarball=${tarball_of[$1 $2]} top root machine
  mkdir -p "$dir/unpacked"
  tar -xzf "$tarball" -C "$dir/unpacked"
  top=$dir/unpacked/$(basename "$tarball" .tar.gz)
  [[ -f $top/lib/snowflake_pg.so && -f $top/extension/snowflake_pg.control && -f $top/extension/snowflake_pg--$version.sql && -f $top/LICENSE ]] ||
    { echo "images.sh: $(basename "$tarball") lacks $(basename "$top")/ lib/snowflake_pg.so, extension/snowflake_pg.control, extension/snowflake_pg--$version.sql or LICENSE" >&2; return 1; }
  machine=$(elf_machine "$top/lib/snowflake_pg.so")
  [[ $machine == "${elf_machines[$arch]}" ]] ||
    { echo "images.sh: the library of $(basename "$tarball") is not an $arch ELF file (e_machine ${elf_machines[$arch]}): e_machine ${machine:-(none)}" >&2; return 1; }
  mtime=$(stat -c %Y "$top/lib/snowflake_pg.so")
  root=$dir/root
  mkdir -p "$root/lib" "$root/share/extension" "$root/licenses/snowflake_pg"
  cp "$top/lib/snowflake_pg.so" "$root/lib/"
  cp "$top"/extension/snowflake_pg.control "$top"/extension/snowflake_pg--*.sql "$root/share/extension/"
  cp "$top/LICENSE" "$root/licenses/snowflake_pg/"
  dep5_copyright "$top/LICENSE" >"$root/licenses/snowflake_pg/copyright"
  find "$root" -type d -exec chmod 755 {} + && find "$root" -type f -exec chmod 644 {} +
  deterministic_tar "$root" lib licenses share >"$dir/layer.tar"
  gzip -9n <"$dir/layer.tar" >"$dir/layer.tar.gz"
}

for pg in "${majors[@]}"; do
  layout=$work/pg$pg/layout layers=()
  mkdir -p "$layout/blobs/sha256"
  for arch in amd64 arm64; do
    [[ -n ${tarball_of[$pg $arch]:-} ]] || continue
    layer "$pg" "$arch" "$work/pg$pg/$arch"
    layers+=("$arch" "$work/pg$pg/$arch/layer.tar" "$work/pg$pg/$arch/layer.tar.gz")
  done
  # The blobs and JSON: Python, whose json module writes the documents and hashlib their
  # digests, rather than JSON assembled by hand in the shell.
  python3 - "$layout" "$version" "$pg" "$mtime" "${IMAGE_SOURCE:-}" "${layers[@]}" <<'EOF'
import datetime, hashlib, json, os, shutil, sys

layout, version, major, mtime, source = sys.argv[1:6]
layers = [sys.argv[i:i + 3] for i in range(6, len(sys.argv), 3)]
blobs = os.path.join(layout, "blobs", "sha256")
created = datetime.datetime.fromtimestamp(int(mtime), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
labels = {
    "org.opencontainers.image.title": "snowflake_pg",
    "org.opencontainers.image.description": (
        f"snowflake_pg {version} for PostgreSQL {major}: time-ordered, cluster-unique 64-bit ids. "
        "A CloudNativePG image volume extension: /lib and /share/extension."),
    "org.opencontainers.image.version": version,
    "org.opencontainers.image.created": created,
    "org.opencontainers.image.licenses": "PostgreSQL",
}
if source:
    labels["org.opencontainers.image.source"] = source


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def blob_file(path, media_type):
    """The file as a blob; its descriptor."""
    hex_digest = sha256_of(path)
    shutil.copyfile(path, os.path.join(blobs, hex_digest))
    return {"mediaType": media_type, "digest": "sha256:" + hex_digest, "size": os.path.getsize(path)}


def blob_json(document, media_type):
    """The document as a blob, its keys sorted and without spaces; its descriptor."""
    data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    hex_digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, hex_digest), "wb") as file:
        file.write(data)
    return {"mediaType": media_type, "digest": "sha256:" + hex_digest, "size": len(data)}


manifests = []
for arch, layer_tar, layer_gz in layers:
    config = blob_json({
        "architecture": arch,
        "os": "linux",
        "created": created,
        "config": {"Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha256_of(layer_tar)]},
        "history": [{"created": created, "created_by": "scripts/images.sh: lib, share/extension and licenses of "
                     f"snowflake_pg-{version}-pg{major}-{arch}-linux-gnu.tar.gz"}],
    }, "application/vnd.oci.image.config.v1+json")
    manifest = blob_json({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config,
        "layers": [blob_file(layer_gz, "application/vnd.oci.image.layer.v1.tar+gzip")],
        "annotations": labels,
    }, "application/vnd.oci.image.manifest.v1+json")
    manifests.append(dict(manifest, platform={"architecture": arch, "os": "linux"}))
index = blob_json({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": manifests,
    "annotations": labels,
}, "application/vnd.oci.image.index.v1+json")
# index.json names the one index, tagged, so that oci-archive:FILE needs no tag to pick it.
index["annotations"] = {"org.opencontainers.image.ref.name": f"{version}-pg{major}"}
with open(os.path.join(layout, "index.json"), "w") as file:
    json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [index]},
              file, sort_keys=True, separators=(",", ":"))
with open(os.path.join(layout, "oci-layout"), "w") as file:
    json.dump({"imageLayoutVersion": "1.0.0"}, file)
EOF
  find "$layout" -type d -exec chmod 755 {} + && find "$layout" -type f -exec chmod 644 {} +
  archive=$out/snowflake_pg-$version-pg$pg.oci.tar
  deterministic_tar "$layout" blobs index.json oci-layout >"$archive.new"
  mv -f "$archive.new" "$archive"
  echo "$archive"
done
