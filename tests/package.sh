#!/usr/bin/env bash
# The Debian package of Debian's PostgreSQL V, as a DBA would use it: META.json's version
# checked against Cargo.toml's, the package built (scripts/package.sh) and its fields and
# files checked, then the source install of snowflake_pg removed from PostgreSQL V, the
# package installed with apt-get, its files listed by dpkg, the pg_regress suite run
# against it (installcheck style), and the package removed. Whatever happens, the source
# install is put back (install_extension V) for the steps that follow.
# Says SKIP where PostgreSQL V is not Debian's (16, 17 and 18 come from wheels); tests/run.sh
# runs it on 15 and 18.
# Usage: bash tests/package.sh 15
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
pg=${1:?usage: package.sh 15}
fail() { echo "FAIL package: $*" >&2; exit 1; }

cd "$SNOWFLAKE_PG_ROOT"
version=$(cargo pkgid) # path+file:///...#snowflake_pg@X.Y.Z
version=${version##*[#@]}

# META.json: valid JSON with the fields PGXN requires, and Cargo.toml's version.
python3 - "$version" <<'EOF' || fail "META.json does not match Cargo.toml (version $version)"
import json, sys
version = sys.argv[1]
meta = json.load(open("META.json"))
required = ("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec")
problems = [f"no {key}" for key in required if key not in meta]
extension = meta.get("provides", {}).get("snowflake_pg", {})
for where, found in (("version", meta.get("version")), ("provides.snowflake_pg.version", extension.get("version"))):
    if found != version:
        problems.append(f"{where} is {found}, Cargo.toml says {version}")
for problem in problems:
    print(f"META.json: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
echo "ok META.json: version $version, as Cargo.toml"

status=0
deb=$(bash scripts/package.sh "$pg") || status=$?
if ((status == 3)); then echo "SKIP package: PostgreSQL $pg here is not Debian's"; exit 0; fi
((status == 0)) || fail "scripts/package.sh $pg failed"
package=$(dpkg-deb -f "$deb" Package)
[[ $(basename "$deb") == "postgresql-$pg-snowflake-pg_$version-1_$(dpkg --print-architecture).deb" ]] ||
  fail "the package file is $deb"
[[ $(dpkg-deb -f "$deb" Version) == "$version-1" && $(dpkg-deb -f "$deb" Depends) == "postgresql-$pg" ]] ||
  fail "$deb: version $(dpkg-deb -f "$deb" Version), depends on $(dpkg-deb -f "$deb" Depends)"

# The files the package must hold: the library, the control file, this version's install
# script, every install and upgrade script of the repository, the copyright.
libdir=/usr/lib/postgresql/$pg/lib extdir=/usr/share/postgresql/$pg/extension
expected=("$libdir/snowflake_pg.so" "$extdir/snowflake_pg.control" "$extdir/snowflake_pg--$version.sql"
  "/usr/share/doc/$package/copyright")
shopt -s nullglob
for script in sql/snowflake_pg--*.sql; do
  [[ $(basename "$script") == "snowflake_pg--$version.sql" ]] || expected+=("$extdir/$(basename "$script")")
done
shopt -u nullglob
echo "ok built $(basename "$deb"): ${#expected[@]} files expected"

installed() { dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; }
apt() { DEBIAN_FRONTEND=noninteractive apt-get "$@" -y -q >"$SNOWFLAKE_PG_ROOT/target/debian/apt.log" 2>&1 ||
  { cat "$SNOWFLAKE_PG_ROOT/target/debian/apt.log" >&2; return 1; }; }
# Put the source install back, however the test ends; a signal now would stop it halfway.
restore() {
  local code=$?
  trap - EXIT
  trap '' INT TERM
  if installed; then apt remove --purge "$package" || code=1; fi
  install_extension "$pg" || { echo "FAIL package: could not restore the source install" >&2; code=1; }
  exit "$code"
}
trap restore EXIT
trap 'exit 130' INT TERM

rm -f "$libdir/snowflake_pg.so" "$extdir/snowflake_pg.control" "$extdir"/snowflake_pg--*.sql
echo "ok source install removed from PostgreSQL $pg"

apt install "$deb"
listed=$(dpkg -L "$package")
for file in "${expected[@]}"; do
  grep -qxF "$file" <<<"$listed" || fail "dpkg -L $package does not list $file"
  [[ -f $file ]] || fail "$file is listed but not installed"
done
dpkg --verify "$package" || fail "the installed files of $package differ from the package's checksums"
echo "ok apt-get installed $package: dpkg -L lists all ${#expected[@]} files, checksums verified"

bash tests/regress.sh "$pg" || fail "the pg_regress suite failed against the package"
echo "ok pg_regress suite passed against the package"

apt remove --purge "$package"
for file in "${expected[@]}"; do [[ ! -e $file ]] || fail "$file is left after removing $package"; done
echo "ok $package removed, its files with it"
