#!/usr/bin/env bash
# Lints the GitHub Actions workflows (.github/workflows/*.yml) with two tools, each of which
# must report nothing:
#   check-jsonschema, against the workflow schema it ships (vendor.github-workflows, so
#     nothing is downloaded): a misspelt key, a step with both `uses` and `run`, a value
#     of the wrong type fail here rather than on GitHub after a tag is pushed;
#   zizmor, the security audits of its default ("regular") persona, offline (the audits
#     that ask GitHub's API, such as known-vulnerable actions, are left out): unpinned
#     actions, credentials left in the clone, permissions wider than a job needs, template
#     expansions inside shell scripts, and the rest. A finding that is a false positive is
#     silenced where it is, by a `# zizmor: ignore[AUDIT]` comment saying why.
# The tools come from PyPI, exactly as pinned in tests/workflows/requirements.txt, into a
# virtual environment of their own (WORKFLOWS_VENV), installed afresh whenever the pins
# differ from the copy a finished install leaves beside them; after that the test needs
# no network. As root, like the other steps (the environment lives under /var/lib).
# `venv` makes or checks the environment and stops there (tests/workflows/steps.sh reads
# the workflows with its ruamel.yaml).
# tests/workflows/steps.sh runs the workflows' steps themselves.
# Usage: bash tests/workflows.sh [venv]
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
WORKFLOWS_VENV=${WORKFLOWS_VENV:-/var/lib/snowflake_pg/workflows-venv}
pins=$SNOWFLAKE_PG_ROOT/tests/workflows/requirements.txt

fail() { echo "FAIL workflows: $*" >&2; exit 1; }

if ! cmp -s "$pins" "$WORKFLOWS_VENV/requirements.installed.txt"; then
  echo "== workflows: check-jsonschema and zizmor into $WORKFLOWS_VENV"
  rm -rf "$WORKFLOWS_VENV"
  mkdir -p "$(dirname "$WORKFLOWS_VENV")"
  # Debian's python3 makes no virtual environment without python3-venv (setup-tests.sh
  # installs it; this test may run before or without it).
  if ! python3 -m venv "$WORKFLOWS_VENV" 2>/dev/null; then
    rm -rf "$WORKFLOWS_VENV"
    apt_install_missing python3-venv >/dev/null
    python3 -m venv "$WORKFLOWS_VENV"
  fi
  "$WORKFLOWS_VENV/bin/pip" install --quiet --disable-pip-version-check -r "$pins"
  cp "$pins" "$WORKFLOWS_VENV/requirements.installed.txt"
fi

[[ ${1:-} != venv ]] || exit 0

cd "$SNOWFLAKE_PG_ROOT"
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
((${#workflows[@]})) || fail "no workflow in .github/workflows"

failed=0
# check-jsonschema: prints "ok -- validation done" or each error, with the file and path.
if "$WORKFLOWS_VENV/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"; then
  echo "ok workflows: check-jsonschema (vendor.github-workflows): ${workflows[*]} valid"
else
  echo "FAIL workflows: check-jsonschema found the errors above" >&2
  failed=1
fi
# zizmor: prints each finding with its audit, place and fix, then a count; it exits 0 only
# with no finding (11 to 14 by the worst one's severity, 1 on an error of its own). The
# workflows are given as files, so that it audits only them and nothing of the tree that
# it would collect from the root (a clone of another repository under target/, say).
# --strict-collection: a workflow it cannot parse fails instead of being skipped.
if "$WORKFLOWS_VENV/bin/zizmor" --offline --no-progress --color never --strict-collection "${workflows[@]}"; then
  echo "ok workflows: zizmor $("$WORKFLOWS_VENV/bin/zizmor" --version | awk '{ print $2 }') (offline, regular persona): no finding in ${workflows[*]}"
else
  echo "FAIL workflows: zizmor reported the findings above" >&2
  failed=1
fi
exit "$failed"
