#!/usr/bin/env bash
# Prints the path of a Python virtual environment holding tests/python/requirements.txt (and
# requirements-nodeps.txt, installed without dependencies), creating it on first use. The
# environment is cached outside the repository, keyed by the hash of the requirements files, so
# a changed pin builds a new one and an unchanged one is reused in milliseconds:
#   ${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/venv/<hash>/
# Exit status 1 with a message naming pip's error when the packages cannot be installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req="$here/requirements.txt"
nodeps="$here/requirements-nodeps.txt"
cache=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/venv
key=$(cat "$req" "$nodeps" | sha256sum | cut -c1-16)
dir="$cache/$key"

if [[ -x $dir/bin/python && -f $dir/.complete ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$cache"
# One creator at a time: ctest may start two suites that both need the environment.
exec 9>"$cache/.lock"
flock 9
if [[ -x $dir/bin/python && -f $dir/.complete ]]; then
  echo "$dir"
  exit 0
fi

start=$SECONDS
echo "venv: creating $dir from $req (first use; downloads from PyPI)" >&2
# Made in place (a venv's scripts name their own path); only .complete marks it usable.
rm -rf "$dir"
python3 -m venv "$dir"
if ! { "$dir/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" &&
       "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$nodeps"; } \
    >"$cache/pip-$key.log" 2>&1; then
  echo "venv: pip install failed; last lines of $cache/pip-$key.log:" >&2
  tail -n 20 "$cache/pip-$key.log" >&2
  exit 1
fi
touch "$dir/.complete"
echo "venv: ready in $((SECONDS - start)) s" >&2
echo "$dir"
