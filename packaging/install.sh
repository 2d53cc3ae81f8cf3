#!/bin/sh
# Installs snowflake_pg @VERSION@ for PostgreSQL @MAJOR@ from this directory into the
# server whose pg_config is given (the pg_config on PATH by default): the library into its
# `pg_config --pkglibdir`, the control file and the SQL scripts into its
# `pg_config --sharedir`/extension. Run it as the user who owns those directories (root,
# usually). Each file goes in under a temporary name and is then renamed into place, so a
# running server keeps the library it loaded until it restarts.
# It refuses a pg_config of another major, or whose server (`pg_config --bindir`/postgres,
# else the pg_config program itself) is built for another machine than the library: a
# library of the wrong architecture would fail only later, at CREATE EXTENSION, or stop a
# server that preloads it from starting. The machines are read from the ELF headers with
# od alone, so that it runs on any Linux.
# Usage: sh install.sh [/path/to/pg_config]
set -eu
pg_config=${1:-pg_config}
here=$(cd "$(dirname "$0")" && pwd)

# elf_arch FILE: the architecture FILE is built for, as "Debian's name (the kernel's)",
# read from its ELF header (e_machine, bytes 18-19, in the byte order of byte 5); nothing
# when FILE is no ELF file.
elf_arch() {
  # shellcheck disable=SC2046 # the header's bytes, one word each
  set -- $(od -A n -t u1 -N 20 "$1" 2>/dev/null)
  [ $# -eq 20 ] && [ "$1 $2 $3 $4" = "127 69 76 70" ] || return 0
  elf_data=$6 # 1: little-endian, 2: big-endian
  shift 18
  if [ "$elf_data" = 2 ]; then elf_machine=$(($1 * 256 + $2)); else elf_machine=$(($2 * 256 + $1)); fi
  case $elf_machine.$elf_data in
    62.*) echo "amd64 (x86_64)" ;;
    183.*) echo "arm64 (aarch64)" ;;
    3.*) echo "i386 (i686)" ;;
    40.*) echo "armhf (armv7l)" ;;
    21.1) echo "ppc64el (ppc64le)" ;;
    21.2) echo "ppc64 (ppc64)" ;;
    22.*) echo "s390x (s390x)" ;;
    243.*) echo "riscv64 (riscv64)" ;;
    *) echo "ELF machine $elf_machine" ;;
  esac
}

command -v "$pg_config" >/dev/null 2>&1 ||
  { echo "install.sh: no pg_config at $pg_config; give its path: sh install.sh /path/to/pg_config" >&2; exit 1; }
arch=$(elf_arch "$here/lib/snowflake_pg.so")
[ -n "$arch" ] || { echo "install.sh: $here/lib/snowflake_pg.so is no ELF library" >&2; exit 1; }
# A pg_config of another machine may not even run here: its major is then unknown.
major=$("$pg_config" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p') || major=
bindir=$("$pg_config" --bindir 2>/dev/null) || bindir=
server_arch=$(elf_arch "$bindir/postgres")
[ -n "$server_arch" ] || server_arch=$(elf_arch "$(command -v "$pg_config")")
if [ "$major" != @MAJOR@ ] || [ "$server_arch" != "$arch" ]; then
  echo "install.sh: these files are for PostgreSQL @MAJOR@ on $arch; $pg_config is of PostgreSQL ${major:-(unknown)} on ${server_arch:-an unknown architecture}" >&2
  exit 1
fi
libdir=$("$pg_config" --pkglibdir)
extdir=$("$pg_config" --sharedir)/extension
put() { # put FILE DIR
  mkdir -p "$2"
  cp "$1" "$2/.$(basename "$1").new.$$"
  chmod 644 "$2/.$(basename "$1").new.$$"
  mv -f "$2/.$(basename "$1").new.$$" "$2/$(basename "$1")"
}
put "$here/lib/snowflake_pg.so" "$libdir"
for file in "$here"/extension/*; do put "$file" "$extdir"; done
echo "snowflake_pg @VERSION@ installed into PostgreSQL $major on $arch: $libdir/snowflake_pg.so, $extdir/snowflake_pg*"
echo "then, in each database: CREATE EXTENSION snowflake_pg; (or, from an earlier version: ALTER EXTENSION snowflake_pg UPDATE;)"
