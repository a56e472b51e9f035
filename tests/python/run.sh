#!/usr/bin/env bash
# Runs a Python unittest module with the test venv's interpreter (see venv.sh):
#   tests/python/run.sh MODULE   (from the module's directory)
set -euo pipefail
venv=$("$(dirname "${BASH_SOURCE[0]}")/venv.sh")
exec "$venv/bin/python" -m unittest -v "$@"
