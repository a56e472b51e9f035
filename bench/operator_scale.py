"""Operator scale benchmark on the local cluster: N jobs of 7 pods applied at once
(tests/e2e/scale_harness.py says what it measures; tests/e2e/scale_test.py runs the same
harness in make test). Prints one JSON line.

Usage: python3 bench/operator_scale.py [JOBS]
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from scale_harness import run_scale  # noqa: E402

if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    print(json.dumps(run_scale(jobs=n)))
