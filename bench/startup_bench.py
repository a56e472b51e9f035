"""Startup latency: from a job's apply to every one of its pods Running, on the local cluster
(kwok's simulated nodes; issue #59).

For each count of other jobs present (running: each of 7 pods, held Running by kwok), RUNS jobs of
7 pods (chief, 2 PS, 3 workers, evaluator) are applied one after another, each measured and deleted
before the next, so the count stays what it says. One watch of the measured namespace's pods (one
clock: this process's monotonic one) gives, per job:
- total: apply to the last of its 7 pods seen Running;
- operator: apply to the last of its pods seen ADDED (the job seen, its pods built and created,
  the creates answered and watched back): the operator's share, the rest being the scheduler's
  binding and kwok's start.
Reports p50 and p99 of both and the operator's share of the p50, per count.

Usage: python3 bench/startup_bench.py [--others 0,100] [--runs 20]
Needs the cluster up (make cluster-up; DISTTRAIN_LANE=b for a kwok-only lane) and the release
operator in DISTTRAIN_BIN (make bench-startup does both). Prints one JSON line per count.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from crd_test import install_crd  # noqa: E402
from kube import ROOT, Namespace, apply, get_json, kubectl, wait_until  # noqa: E402
from operator_process import OperatorProcess  # noqa: E402
from scale_harness import PodWatcher, job_manifest, percentile  # noqa: E402

PODS = 7
FOREVER = 10 ** 6  # seconds: the other jobs' chiefs keep running


def measure(ns, watcher, name):
    manifest = job_manifest(name, FOREVER)
    start = time.monotonic()
    apply(manifest, ns)
    pods = [f"{name}-chief-0", f"{name}-ps-0", f"{name}-ps-1", f"{name}-worker-0", f"{name}-worker-1",
            f"{name}-worker-2", f"{name}-evaluator-0"]
    wait_until(f"{name}'s pods running", lambda: all(p in watcher.running for p in pods), timeout=120,
               interval=0.02)
    total = max(watcher.running[p] for p in pods) - start
    created = max(watcher.added[p] for p in pods) - start
    kubectl("delete", "dtr", name, "-n", ns, "--wait=false")
    wait_until(f"{name}'s pods gone", lambda: not get_json("pods", "-n", ns, "-l",
                                                           f"disttrain.io/job-name={name}")["items"],
               timeout=120, interval=0.2)
    return total, created


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--others", default="0,100", help="counts of other running jobs, comma-separated")
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    install_crd()
    operator = OperatorProcess("startup-bench").start()
    try:
        with Namespace("startup-others") as others, Namespace("startup") as ns:
            watcher = PodWatcher(ns)
            present = 0
            for count in (int(c) for c in a.others.split(",")):
                if count > present:
                    # 100m of CPU per pod, 64 CPUs per simulated node (tests/cluster/add-nodes.sh):
                    # the default 4 nodes hold 2,560 pods, 1,000 jobs need 12.
                    nodes = max(4, -(-(count + 1) * PODS // 640) + 1)
                    subprocess.run([os.path.join(ROOT, "tests", "cluster", "add-nodes.sh")], check=True,
                                   env=dict(os.environ, DISTTRAIN_NODES=str(nodes)), stdout=subprocess.DEVNULL)
                    for start in range(present, count, 50):
                        batch = [job_manifest(f"other-{i}", FOREVER) for i in range(start, min(count, start + 50))]
                        apply({"apiVersion": "v1", "kind": "List", "items": batch}, others)
                    wait_until(f"{count * PODS} pods of the other jobs running", lambda: sum(
                        p.get("status", {}).get("phase") == "Running"
                        for p in get_json("pods", "-n", others)["items"]) == count * PODS, timeout=900, interval=2)
                    present = count
                totals, created = [], []
                for i in range(a.runs):
                    t, c = measure(ns, watcher, f"s{count}-{i}")
                    totals.append(t)
                    created.append(c)
                p50, p99 = statistics.median(totals), percentile(totals, 99)
                c50, c99 = statistics.median(created), percentile(created, 99)
                print(json.dumps({"other_jobs": count, "other_state": "running", "runs": a.runs,
                                  "total_p50_s": round(p50, 3), "total_p99_s": round(p99, 3),
                                  "operator_p50_s": round(c50, 3), "operator_p99_s": round(c99, 3),
                                  "operator_share_p50": round(c50 / p50, 3),
                                  "totals_s": [round(t, 2) for t in totals],
                                  "operator_s": [round(c, 2) for c in created]}), flush=True)
            watcher.stop()
    finally:
        code = operator.stop()
        print(json.dumps({"operator_exit": code}), file=sys.stderr)


if __name__ == "__main__":
    main()
