"""Fault injection between the operator and the API server: 100 jobs through latency spikes,
connection resets, black-holed and stalled connections, an API-server restart with a forced 410
and five SIGKILLs of the operator (tests/e2e/fault_harness.py says what is injected and checked;
tests/e2e/faults_test.py runs the same harness in make test). Prints one JSON line.

Usage: python3 bench/operator_faults.py [JOBS] [--seed N] [--operator-args "FLAGS"]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from fault_harness import run_faults  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Fault injection between the operator and the API server.")
    parser.add_argument("jobs", type=int, nargs="?", default=100)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--operator-args", default="", help="extra operator flags, space-separated")
    a = parser.parse_args()
    print(json.dumps(run_faults(jobs=a.jobs, seed=a.seed, operator_args=a.operator_args.split())))
