"""Startup latency: from a job's apply to every one of its pods Running, on the local cluster
(kwok's simulated nodes; issue #59), for our operator and, side by side on the same cluster,
Kubeflow's training-operator v1.9 running the same jobs as TFJobs (the peer, at its defaults and
with our threads and rate limits).

For each count of other jobs present (running: each of 7 pods, held Running by kwok), RUNS jobs of
7 pods (chief, 2 PS, 3 workers, evaluator) are applied one after another, each measured and deleted
before the next, so the count stays what it says. One watch of the measured namespace's pods (one
clock: this process's monotonic one) gives, per job:
- total: apply to the last of its 7 pods seen Running;
- operator: apply to the last of its pods seen ADDED (the job seen, its pods built and created,
  the creates answered and watched back): the operator's share, the rest being the scheduler's
  binding and kwok's start.
Reports p50 and p99 of both and the operator's share of the p50, per count.

--big also measures one job of 1,000 workers, 100 parameter servers and a chief (1,101 pods)
once per contender, alone: apply to its last pod Running, the operator's part, and the CPU seconds
the operator, kube-apiserver, kube-scheduler and kwok took meanwhile (what bounds the figure on
this 2-core control plane).

Usage: python3 bench/startup_bench.py [--others 0,100] [--runs 20] [--contenders disttrain,peer-defaults,peer-matched] [--big]
Needs the cluster up (make cluster-up; DISTTRAIN_LANE=b for a kwok-only lane) and the release
operator in DISTTRAIN_BIN (make bench-startup does both). Prints one JSON line per measurement.
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
from kube import KUBECONFIG, ROOT, Namespace, apply, get_json, kubectl, wait_until  # noqa: E402
from operator_process import OperatorProcess  # noqa: E402
from peer_process import Peer, build_peer  # noqa: E402
from scale_harness import PodWatcher, job_manifest, percentile  # noqa: E402

PODS = 7
FOREVER = 10 ** 6  # seconds: the other jobs' chiefs keep running
BIG = {"Worker": 1000, "PS": 100}  # --big: with a chief, 1,101 pods
OURS_SELECTOR = "app.kubernetes.io/managed-by=disttrain-operator"
PEER_SELECTOR = "training.kubeflow.org/job-name"
# The peer with our --workers and rate limits (as make bench-peer's peer-matched).
PEER_MATCHED = ["--controller-threads=6", "--kube-api-qps=400", "--kube-api-burst=800"]


def tfjob(dtr):
    """The TFJob of the same pods as DistributedTraining `dtr` (bench/peer/peer_bench.py's)."""
    specs = {role: {"replicas": spec["replicas"], "restartPolicy": "Never", "template": spec["template"]}
             for role, spec in dtr["spec"]["replicaSpecs"].items()}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": dtr["metadata"],
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": specs}}


def big_manifest(name):
    job = job_manifest(name, FOREVER)
    roles = job["spec"]["replicaSpecs"]
    del roles["Evaluator"]
    for role, n in BIG.items():
        roles[role]["replicas"] = n
    return job


def pod_names(job):
    return [f"{job['metadata']['name']}-{role.lower()}-{i}"
            for role, spec in job["spec"]["replicaSpecs"].items() for i in range(spec["replicas"])]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def control_plane_pids():
    """{component: pid} of this cluster's API server, scheduler and kwok (kwokctl's pid files)."""
    base = os.path.join(os.path.dirname(KUBECONFIG), "kwok", "clusters")
    out = {}
    for cluster in os.listdir(base):
        for component in ("kube-apiserver", "kube-scheduler", "kwok-controller"):
            path = os.path.join(base, cluster, "pids", component + ".pid")
            if os.path.exists(path):
                out[component] = int(open(path).read())
    return out


class Contender:
    def __init__(self, name, peer_folder):
        self.name, self.peer_folder = name, peer_folder
        self.ours = name == "disttrain"
        self.kind = "dtr" if self.ours else "tfjobs"
        self.selector = OURS_SELECTOR if self.ours else PEER_SELECTOR

    def manifest(self, dtr):
        return dtr if self.ours else tfjob(dtr)

    def start(self):
        if self.ours:
            install_crd()
            self.process = OperatorProcess("startup-bench").start()
        else:
            Peer.install(self.peer_folder)
            self.process = Peer(self.peer_folder, PEER_MATCHED if self.name == "peer-matched" else []).start()
        return self

    def pid(self):
        return self.process.proc.pid

    def stop(self):
        return self.process.stop()


def measure(contender, ns, watcher, job, timeout=120):
    """(total, operator, cpu) of one job: apply to every pod Running, to every pod created, and
    the CPU seconds of the operator and the control plane meanwhile."""
    pods = pod_names(job)
    pids = dict(control_plane_pids(), operator=contender.pid())
    cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
    start = time.monotonic()
    apply(contender.manifest(job), ns)
    wait_until(f"{job['metadata']['name']}'s pods running", lambda: all(p in watcher.running for p in pods),
               timeout=timeout, interval=0.02)
    cpu = {k: round(cpu_seconds(p) - cpu0[k], 2) for k, p in pids.items()}
    total = max(watcher.running[p] for p in pods) - start
    created = max(watcher.added[p] for p in pods) - start
    name = job["metadata"]["name"]
    kubectl("delete", contender.kind, name, "-n", ns, "--wait=false")
    label = "disttrain.io/job-name" if contender.ours else "training.kubeflow.org/job-name"
    wait_until(f"{name}'s pods gone", lambda: not get_json("pods", "-n", ns, "-l", f"{label}={name}")["items"],
               timeout=max(timeout, 300), interval=0.5)
    return total, created, cpu


def run_contender(contender, counts, runs, big):
    contender.start()
    try:
        with Namespace("startup-others") as others, Namespace("startup") as ns:
            watcher = PodWatcher(ns, contender.selector)
            present = 0
            for count in counts:
                if count > present:
                    # 100m of CPU per pod, 64 CPUs per simulated node (tests/cluster/add-nodes.sh):
                    # the default 4 nodes hold 2,560 pods, 1,000 jobs need 12.
                    nodes = max(4, -(-(count + 1) * PODS // 640) + 1)
                    subprocess.run([os.path.join(ROOT, "tests", "cluster", "add-nodes.sh")], check=True,
                                   env=dict(os.environ, DISTTRAIN_NODES=str(nodes)), stdout=subprocess.DEVNULL)
                    for start in range(present, count, 50):
                        batch = [contender.manifest(job_manifest(f"other-{i}", FOREVER))
                                 for i in range(start, min(count, start + 50))]
                        apply({"apiVersion": "v1", "kind": "List", "items": batch}, others)
                    wait_until(f"{count * PODS} pods of the other jobs running", lambda: sum(
                        p.get("status", {}).get("phase") == "Running"
                        for p in get_json("pods", "-n", others)["items"]) == count * PODS, timeout=900, interval=2)
                    present = count
                totals, created = [], []
                for i in range(runs):
                    t, c, _ = measure(contender, ns, watcher, job_manifest(f"s{count}-{i}", FOREVER))
                    totals.append(t)
                    created.append(c)
                p50, p99 = statistics.median(totals), percentile(totals, 99)
                c50, c99 = statistics.median(created), percentile(created, 99)
                print(json.dumps({"contender": contender.name, "other_jobs": count, "other_state": "running",
                                  "runs": runs, "total_p50_s": round(p50, 3), "total_p99_s": round(p99, 3),
                                  "operator_p50_s": round(c50, 3), "operator_p99_s": round(c99, 3),
                                  "operator_share_p50": round(c50 / p50, 3),
                                  "totals_s": [round(t, 2) for t in totals],
                                  "operator_s": [round(c, 2) for c in created]}), flush=True)
            # The other jobs go, their pods with them, before the big job (so its figure is its
            # own) and before the next contender (so no deletion loads the API server during it).
            kubectl("delete", contender.kind, "--all", "-n", others, "--wait=false")
            wait_until("the other jobs' pods gone", lambda: not get_json("pods", "-n", others)["items"],
                       timeout=900, interval=2)
            if big:
                nodes = -(-(sum(BIG.values()) + 1) // 640) + 4
                subprocess.run([os.path.join(ROOT, "tests", "cluster", "add-nodes.sh")], check=True,
                               env=dict(os.environ, DISTTRAIN_NODES=str(nodes)), stdout=subprocess.DEVNULL)
                total, created, cpu = measure(contender, ns, watcher, big_manifest("big"), timeout=600)
                print(json.dumps({"contender": contender.name, "job": "1 chief, 100 ps, 1,000 workers",
                                  "pods": sum(BIG.values()) + 1, "total_s": round(total, 2),
                                  "operator_s": round(created, 2), "operator_share": round(created / total, 3),
                                  "cpu_s": cpu}), flush=True)
            watcher.stop()
    finally:
        code = contender.stop()
        print(json.dumps({"contender": contender.name, "operator_exit": code}), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--others", default="0,100", help="counts of other running jobs, comma-separated")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--contenders", default="disttrain",
                    help="disttrain, peer-defaults (training-operator v1.9 at its defaults), peer-matched")
    ap.add_argument("--big", action="store_true", help="also one job of 1,101 pods per contender")
    a = ap.parse_args()
    names = a.contenders.split(",")
    peer = build_peer() if any(n.startswith("peer") for n in names) else None
    for name in names:
        run_contender(Contender(name, peer), [int(c) for c in a.others.split(",")], a.runs, a.big)


if __name__ == "__main__":
    main()
