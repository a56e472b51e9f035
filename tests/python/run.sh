#!/usr/bin/env bash
# Runs a Python unittest module, or a test script, with the test venv's interpreter (see venv.sh):
#   tests/python/run.sh MODULE           (from the module's directory)
#   tests/python/run.sh SCRIPT.py ARGS   (a suite that decides itself whether it can run: exit 77)
set -euo pipefail
venv=$("$(dirname "${BASH_SOURCE[0]}")/venv.sh")
if [[ ${1:-} == *.py ]]; then
  exec "$venv/bin/python" "$@"
fi
exec "$venv/bin/python" -m unittest -v "$@"
