#!/usr/bin/env bash
# Regenerate the two lock files from pyproject.toml:
#   requirements/test.lock    exact pins of everything the core, `test`, `fast` and `spark` extras pull in,
#                             and of the build backend, for every platform and Python >= 3.11.
#                             Development, CI and `tox -e py3,py3-xdist` install from it.
#   requirements/oldest.lock  the same with every direct dependency at the lower end of its
#                             range (Python 3.11), for `tox -e oldest`.
#
#   requirements/lock.sh                            keep the current pins; only follow pyproject.toml's changes
#   requirements/lock.sh --upgrade-package duckdb   move one package (and what it forces) to the newest allowed
#   requirements/lock.sh --upgrade                  move everything to the newest versions the ranges allow
#
# uv resolves, and only here: it is pip-installed into a throwaway venv. Installing from a
# lock needs nothing but pip:  .venv/bin/pip install -c requirements/test.lock -e '.[test]'
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9

tool=$(mktemp -d)
trap 'rm -rf "$tool"' EXIT
python3 -m venv "$tool/venv"
"$tool/venv/bin/pip" install -q "uv==$UV_VERSION"

# uv does not read pip's configuration: hand it the indexes and wheel folders pip is set up
# with (none on a stock machine), and let it take the best version across all of them, as pip does.
index_args=(--index-strategy unsafe-best-match)
pip_cfg() { python3 -m pip config get "$1" 2>/dev/null || true; }
for url in ${PIP_INDEX_URL:-$(pip_cfg global.index-url)}; do index_args+=(--index-url "$url"); done
for url in ${PIP_EXTRA_INDEX_URL:-$(pip_cfg global.extra-index-url)}; do index_args+=(--extra-index-url "$url"); done
for dir in ${PIP_FIND_LINKS:-$(pip_cfg global.find-links)}; do index_args+=(--find-links "$dir"); done

# The build backend ([build-system] requires) is locked too: CI installs with PIP_CONSTRAINT,
# which pip also applies to the isolated build of the package itself.
build_requires=$(python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))')

compile() {  # compile <extra requirements, one per line> <uv options...>
  local more=$1; shift
  "$tool/venv/bin/uv" pip compile pyproject.toml - --extra test --quiet <<<"$more" \
    --no-emit-index-url --no-emit-find-links --custom-compile-command "requirements/lock.sh" \
    "${index_args[@]}" "$@"
}
compile "$build_requires" --extra fast --extra spark --universal --output-file requirements/test.lock "$@"
compile "" --resolution lowest-direct --universal --python-version 3.11 --output-file requirements/oldest.lock "$@"

echo "wrote requirements/test.lock and requirements/oldest.lock. Check: python3 -m venv /tmp/v &&" \
     "/tmp/v/bin/pip install -c requirements/test.lock -e '.[test]' && /tmp/v/bin/pip check && tox -e oldest" >&2
