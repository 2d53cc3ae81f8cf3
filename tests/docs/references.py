"""The doc test's first part, which needs no server: what the pages cite of this tree is
there, and the versions they give are this tree's. Prints a FAIL line naming file:line
for each wrong one, and a count line; exits 1 on any FAIL.

Paths. A word of inline code or of a code block is a path of the tree when it starts
with one of the tree's top-level directories (TOP) and a slash, or is a top-level file's
name (a capital first, a known extension: `CHANGELOG.md`, `Cargo.toml`); it is read
from the top of the tree, whichever page cites it (a trailing `:LINE` and `#anchor`
dropped). A link's target is read from its page's directory, as a browser does. Not
checked: URLs, paths outside the tree (install places such as /usr/lib/..., which start
with a slash), and, when missing, patterns: a glob (`*.sql`), `<name>`, `...`, or a
placeholder in capitals (`OWNER/REPO`, `bench/results/pgV.txt`, `X.Y.Z`).

Versions, against Cargo.toml: the control files' default_version (snowflake_pg's may be
pgrx's `@CARGO_VERSION@`, which is Cargo.toml's; the SQL edition's is the native's
version, docs/managed.md); every extension version a page names in a file or package
name (`snowflake_pg--X.sql`, `snowflake_sql--X.sql`, `snowflake_pg-X-pgN...`,
`postgresql-N-snowflake-pg_X-1_ARCH.deb`, an image tag `X-pgN`), in `default_version`
or in SQL's `VERSION 'X'` and `UPDATE TO 'X'` is Cargo.toml's or a release before it
(one frozen in sql/releases/: history); the security policy's supported series (a table
row `| A.B.x | yes |`) is Cargo.toml's; and every pgrx version (`pgrx X`, `cargo-pgrx
X`, `pgrx = "=X"`) is Cargo.toml's or one of an earlier release (CHANGELOG.md's lines
about pgrx name them).

Usage: references.py PAGE...   (from anywhere; paths are read from the tree this file is in)"""

import os
import re
import sys
import tomllib

from markdown import FENCE_RE

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The tree's top-level directories; target/ is not one: a build's output, which a page
# names as where a run writes, not as a file of the tree.
TOP = ("src", "sql", "sql_edition", "tests", "scripts", "bench", "docs", "ops", "packaging",
       "snowflake_core", ".github", ".ci")
TOP_FILE_RE = re.compile(r"^[A-Z][\w-]*\.(sh|sql|rs|md|toml|control|yml|txt|json|lock)$")
# A pattern rather than a path: a glob, <name>, an ellipsis, or a run of capitals that is
# no word's start (OWNER, pgV, X) and no page's name (README.md).
PATTERN_RE = re.compile(r"[*?\[\]{}<>…]|\.\.\.|(?<![A-Z])[A-Z]+(?![a-zA-Z]|\.md\b)")
INLINE_RE = re.compile(r"(`+)(.+?)\1")
LINK_RE = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
V = r"(\d+\.\d+\.\d+)"
# Where a page names an extension version.
EXTENSION_VERSION_RES = [
    re.compile(r"snowflake_(?:pg|sql)((?:--\d+\.\d+\.\d+)+)"),  # install and upgrade scripts
    re.compile(r"snowflake[-_]pg[-_]" + V),  # packages, tarballs, image archives
    re.compile(r"(?<![\w.-])" + V + r"-pg(?:\d+|[A-Z])\b"),  # image tags: `X-pgN`, IMAGE:X-pgN
    re.compile(r"default_version\s*=\s*'" + V + "'"),
    re.compile(r"\b(?:VERSION|UPDATE TO)\s+'" + V + "'"),
]
PGRX_RES = [
    re.compile(r"\b(?:cargo-)?pgrx(?:-tests)?`?(?:\s+--version)?[\s@=]+(\d+\.\d+(?:\.\d+)?)\b"),
    re.compile(r"\bpgrx(?:-tests)?\s*=\s*(?:\{\s*version\s*=\s*)?\"=?(\d+\.\d+(?:\.\d+)?)\""),
]
SUPPORTED_RE = re.compile(r"^\|\s*(\d+\.\d+)\.x\s*\|\s*yes\b", re.I)


def cargo_versions(cargo_toml):
    """(the package's version, pgrx's) of a Cargo.toml's text."""
    cargo = tomllib.loads(cargo_toml)
    pgrx = cargo["dependencies"]["pgrx"]
    return cargo["package"]["version"], (pgrx if isinstance(pgrx, str) else pgrx["version"]).lstrip("=")


def released():
    """The versions before this one, each with its install script frozen in sql/releases/."""
    names = os.listdir(os.path.join(ROOT, "sql", "releases"))
    frozen = (re.match(r"^snowflake_pg--" + V + r"\.sql$", name) for name in names)
    return {match.group(1) for match in frozen if match}


def released_pgrx():
    """The pgrx of earlier releases: the versions CHANGELOG.md's lines about pgrx name."""
    with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as changelog:
        lines = [line for line in changelog if "pgrx" in line]
    return {version for line in lines for version in re.findall(r"\b\d+\.\d+\.\d+\b", line)}


def control_version(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as control:
        return re.search(r"^default_version = '([^']*)'$", control.read(), re.M).group(1)


def code_words(lines):
    """(line, word) of every word of inline code and of code blocks."""
    fence = None
    for number, line in enumerate(lines, 1):
        if FENCE_RE.match(line):
            fence = None if fence else line
        elif fence:
            yield from ((number, word) for word in line.split())
        else:
            for span in INLINE_RE.finditer(line):
                yield from ((number, word) for word in span.group(2).split())


def tree_path(word):
    """The path of the tree that a word of code names, or None."""
    word = word.rsplit("=", 1)[-1].strip("\"'(),;").rstrip(".:")
    word = re.sub(r"(:\d+)+$", "", word.split("#")[0])
    if "/" in word and word.split("/")[0] in TOP or TOP_FILE_RE.match(word):
        return word
    return None


def missing(path):
    """Whether path, from the top of the tree, is not there (a trailing / wants a directory)."""
    full = os.path.join(ROOT, path)
    return not (os.path.isdir(full) if path.endswith("/") else os.path.exists(full))


def path_problems(page, lines):
    for number, word in code_words(lines):
        path = tree_path(word)
        if path and missing(path) and not PATTERN_RE.search(path):
            yield number, f"`{path}` is not in the tree"
    for number, line in enumerate(lines, 1):
        for link in LINK_RE.finditer(line):
            target = link.group(1).split("#")[0]
            if not target or URL_RE.match(target):
                continue
            path = os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(page), target)), ROOT)
            if path.startswith("..") or missing(path + ("/" if target.endswith("/") else "")):
                yield number, f"the link ({link.group(1)}) leads to {path}, which is not in the tree"


class Versions:
    """Cargo.toml's versions, and those a page may name besides as history."""

    def __init__(self):
        with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as cargo:
            self.current, self.pgrx = cargo_versions(cargo.read())
        self.releases = released()
        self.pgrx_releases = released_pgrx()

    def problems(self):
        """The control files' default versions that are not Cargo.toml's."""
        for control, wanted in (("snowflake_pg.control", {self.current, "@CARGO_VERSION@"}),
                                ("sql_edition/snowflake_sql.control", {self.current})):
            found = control_version(control)
            if found not in wanted:
                yield f"{control}: default_version '{found}' is not Cargo.toml's {self.current}"

    def page_problems(self, lines):
        """(line, problem) of the versions a page names."""
        extension = self.releases | {self.current}
        pgrx = self.pgrx_releases | {self.pgrx}
        for number, line in enumerate(lines, 1):
            named = {version for pattern in EXTENSION_VERSION_RES for match in pattern.finditer(line)
                     for version in match.group(1).strip("-").split("--")}
            for version in sorted(named - extension):
                yield number, f"snowflake_pg {version}: not Cargo.toml's {self.current}, nor a release " \
                              f"before it ({', '.join(sorted(self.releases))}: sql/releases/)"
            for version in sorted({match.group(1) for pattern in PGRX_RES for match in pattern.finditer(line)}):
                if not any(known == version or known.startswith(version + ".") for known in pgrx):
                    yield number, f"pgrx {version}: not Cargo.toml's {self.pgrx}, nor an earlier " \
                                  f"release's ({', '.join(sorted(self.pgrx_releases)) or 'none'})"
            supported = SUPPORTED_RE.match(line)
            if supported and not self.current.startswith(supported.group(1) + "."):
                yield number, f"the supported series {supported.group(1)}.x is not Cargo.toml's {self.current}"


def main():
    versions = Versions()
    fails = list(versions.problems())
    for page in sys.argv[1:]:
        with open(page, encoding="utf-8") as text:
            lines = text.read().split("\n")
        name = os.path.relpath(os.path.abspath(page), ROOT)
        problems = [*path_problems(os.path.abspath(page), lines), *versions.page_problems(lines)]
        fails += [f"{name}:{number}: {problem}" for number, problem in sorted(problems)]
    for fail in fails:
        print(f"FAIL {fail}")
    print(f"references: {len(sys.argv) - 1} pages, {len(fails)} wrong (paths of the tree; Cargo.toml's "
          f"snowflake_pg {versions.current} and pgrx {versions.pgrx})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
