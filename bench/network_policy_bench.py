"""What a job's NetworkPolicy costs its start (issue #36; goal: +<= 1 s).

On the local cluster's simulated nodes, one operator (the build's, at its defaults), jobs of 7
pods applied one at a time, alternating with and without a NetworkPolicy (spec.networkPolicy.enabled
true / false) in each round: the time from `kubectl apply` to the job's last pod being seen by one
API watch. One JSON line per round and a summary of the medians:

  {"bench": "network_policy_start", "round": r, "with_ms": median, "without_ms": median, ...}
  {"bench": "network_policy_start_summary", "with_ms": ..., "without_ms": ..., "added_ms": ...}

Usage: python3 bench/network_policy_bench.py [JOBS_PER_MODE_PER_ROUND] [ROUNDS]   (make cluster-up first)
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from crd_test import install_crd  # noqa: E402
from kube import Namespace, apply, wait_until  # noqa: E402
from operator_process import OperatorProcess  # noqa: E402
from scale_harness import PodWatcher, job_manifest  # noqa: E402


def start_ms(ns, watcher, name, policy):
    manifest = job_manifest(name, 3600)
    manifest["spec"]["networkPolicy"] = {"enabled": policy}
    begin = time.monotonic()
    apply(manifest, ns)
    pods = [f"{name}-{role}-{i}" for role, n in (("chief", 1), ("ps", 2), ("worker", 3), ("evaluator", 1))
            for i in range(n)]
    wait_until(f"the pods of {name}", lambda: all(p in watcher.added for p in pods), timeout=60, interval=0.02)
    return (max(watcher.added[p] for p in pods) - begin) * 1e3


def main():
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    install_crd()
    operator = OperatorProcess("network-policy-bench").start()
    with_all, without_all = [], []
    try:
        with Namespace("npbench") as ns:
            watcher = PodWatcher(ns)
            for r in range(rounds):
                times = {True: [], False: []}
                for i in range(jobs):
                    for policy in (True, False):  # alternating: the same load for both
                        times[policy].append(start_ms(ns, watcher, f"{'np' if policy else 'open'}-{r}-{i}", policy))
                with_all += times[True]
                without_all += times[False]
                print(json.dumps({"bench": "network_policy_start", "round": r, "jobs": jobs,
                                  "with_ms": round(statistics.median(times[True]), 1),
                                  "without_ms": round(statistics.median(times[False]), 1)}), flush=True)
            watcher.stop()
    finally:
        operator.stop()
    w, wo = statistics.median(with_all), statistics.median(without_all)
    print(json.dumps({"bench": "network_policy_start_summary", "jobs": len(with_all),
                      "with_ms": round(w, 1), "without_ms": round(wo, 1), "added_ms": round(w - wo, 1),
                      "goal_added_ms": 1000}), flush=True)


if __name__ == "__main__":
    main()
