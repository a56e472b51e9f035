"""A node lost under a running job, ours against Kubeflow's training-operator (the peer) on the same
scenario (issue #37). The scenario is tests/e2e/lost_node_test.py's: a node the bench heartbeats
as a kubelet would (kwok keeps heartbeating a node it once managed), a job whose four pods
(chief, ps, 2 workers) prefer it, then the heartbeats stop. The node lifecycle controller marks
it NotReady after 40 s (the cluster's --node-monitor-grace-period), taints it, and the taint
manager evicts each pod once its toleration runs out; what follows is the operator's.

Contenders, interleaved, each run --runs times (those with a 300 s toleration --long-runs times):
  disttrain       a DistributedTraining, runPolicy.nodeLossTolerationSeconds unset (30 s)
  disttrain-300   the same with 300 s: Kubernetes' default toleration, for the difference it makes
  peer            the same pods as a TFJob under training-operator v1.9 (it adds no toleration:
                  the API server's DefaultTolerationSeconds gives 300 s)

Figures per run (seconds after the node went NotReady): evicted (the first lost pod marked for
deletion), replaced (every lost replica Running again on another node), or null when that did
not happen within the toleration + --grace seconds. Prints one JSON line per run, then medians.

  python3 bench/lost_node.py [--runs 3] [--long-runs 1] [--only disttrain,peer] [--grace 60]
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
from crd_test import install_crd  # noqa: E402
from kube import Namespace, apply, get_json, kubectl, wait_until  # noqa: E402
from lifecycle_test import job, role  # noqa: E402
from lost_node_test import NODE, HandNode, node_ready, prefer_the_hand_node  # noqa: E402
from operator_process import OperatorProcess  # noqa: E402
from peer_process import Peer, build_peer  # noqa: E402

KUBERNETES_DEFAULT = 300  # DefaultTolerationSeconds: what a pod gets when nothing else is said


def dtr(name, toleration):
    run_policy = {"nodeLossTolerationSeconds": toleration} if toleration else None
    return job(name, run_policy, Chief=prefer_the_hand_node(role(1)), PS=prefer_the_hand_node(role(1)),
               Worker=prefer_the_hand_node(role(2)))


def tfjob(name):
    specs = {r: {"replicas": s["replicas"], "restartPolicy": "OnFailure", "template": s["template"]}
             for r, s in dtr(name, None)["spec"]["replicaSpecs"].items()}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": specs}}


CONTENDERS = {
    # name: (manifest, pod label, toleration the pods get)
    "disttrain": (lambda n: dtr(n, None), "disttrain.io/job-name", 30),
    "disttrain-300": (lambda n: dtr(n, KUBERNETES_DEFAULT), "disttrain.io/job-name", KUBERNETES_DEFAULT),
    "peer": (tfjob, "training.kubeflow.org/job-name", KUBERNETES_DEFAULT),
}


def pods_of(ns, label, name):
    return get_json("pods", "-n", ns, "-l", f"{label}={name}")["items"]


def run_once(contender, peer_folder, grace):
    make, label, toleration = CONTENDERS[contender]
    with Namespace("lostbench") as ns:
        operator = Peer(peer_folder, []).start() if contender == "peer" else OperatorProcess("lost-bench").start()
        node = HandNode()
        try:
            wait_until(f"{NODE} Ready and untainted", lambda: node_ready(NODE) and not get_json(
                "node", NODE)["spec"].get("taints"), timeout=60)
            apply(make("lost"), ns)
            wait_until("every pod bound", lambda: len(
                [p for p in pods_of(ns, label, "lost") if p["spec"].get("nodeName")]) == 4, timeout=90)
            wait_until("the hand node's pods running", lambda: node.run_pods(ns), timeout=10)
            pods = pods_of(ns, label, "lost")
            wait_until("every pod running", lambda: all(p.get("status", {}).get("phase") == "Running"
                                                        for p in pods_of(ns, label, "lost")), timeout=60)
            on_node = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods if p["spec"]["nodeName"] == NODE}
            tolerations = sorted({t.get("tolerationSeconds") for p in pods for t in p["spec"].get("tolerations", [])
                                  if t.get("key", "").startswith("node.kubernetes.io/")})

            node.lose()
            stopped = time.monotonic()
            wait_until(f"{NODE} NotReady", lambda: not node_ready(NODE), timeout=120, interval=0.5)
            not_ready = time.monotonic()
            evicted = replaced = None
            deadline = not_ready + toleration + grace
            while time.monotonic() < deadline and replaced is None:
                now = {p["metadata"]["name"]: p for p in pods_of(ns, label, "lost")}
                if evicted is None and any(
                        name in now and now[name]["metadata"]["uid"] == uid and now[name]["metadata"].get(
                            "deletionTimestamp") for name, uid in on_node.items()):
                    evicted = time.monotonic() - not_ready
                if all(name in now and now[name]["metadata"]["uid"] != uid
                       and now[name]["spec"].get("nodeName") not in (None, NODE)
                       and now[name].get("status", {}).get("phase") == "Running" for name, uid in on_node.items()):
                    replaced = time.monotonic() - not_ready
                time.sleep(0.5)
            stuck = sorted(p["metadata"]["name"] for p in pods_of(ns, label, "lost")
                           if p["metadata"].get("deletionTimestamp"))
            return {"contender": contender, "lost_pods": len(on_node), "tolerations": tolerations,
                    "not_ready_after_heartbeats_s": round(not_ready - stopped, 1),
                    "evicted_s": None if evicted is None else round(evicted, 1),
                    "replaced_s": None if replaced is None else round(replaced, 1),
                    "waited_s": round(time.monotonic() - not_ready, 1), "terminating_at_end": stuck}
        finally:
            node.delete()
            operator.stop()
            # Pods of the lost node stay Terminating (no kubelet confirms them): remove them so the
            # namespace goes at once.
            kubectl("delete", "pods", "--all", "-n", ns, "--grace-period=0", "--force", "--wait=false", check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--long-runs", type=int, default=1,
                        help="runs of the contenders with a 300 s toleration (about 7 min each)")
    parser.add_argument("--only", default=",".join(CONTENDERS))
    parser.add_argument("--grace", type=int, default=60, help="seconds past the toleration to wait for replacements")
    args = parser.parse_args()
    only = args.only.split(",")
    unknown = [c for c in only if c not in CONTENDERS]
    if unknown:
        parser.error(f"unknown contender(s) {unknown}: want some of {list(CONTENDERS)}")
    install_crd()
    peer_folder = None
    if "peer" in only:
        peer_folder = build_peer()
        Peer.install(peer_folder)
    results = {c: [] for c in only}
    for i in range(max(args.runs, args.long_runs)):
        for c in only:
            if i >= (args.long_runs if CONTENDERS[c][2] >= KUBERNETES_DEFAULT else args.runs):
                continue
            r = run_once(c, peer_folder, args.grace)
            print(json.dumps(r), flush=True)
            results[c].append(r)
    print("\n| contender | pods' toleration (s) | NotReady after heartbeats stop (s) | evicted after NotReady (s) "
          "| replaced and Running after NotReady (s) | lost pods left Terminating |\n|---|---|---|---|---|---|")

    def med(rs, key):
        values = [r[key] for r in rs if r[key] is not None]
        if len(values) < len(rs):
            return f"not in {rs[0]['waited_s']:.0f} s ({len(rs) - len(values)} of {len(rs)} runs)" if not values \
                else f"{statistics.median(values):.1f} ({len(rs) - len(values)} of {len(rs)} runs: never)"
        return f"{statistics.median(values):.1f}"
    for c, rs in results.items():
        print(f"| {c} | {rs[0]['tolerations']} | {med(rs, 'not_ready_after_heartbeats_s')} | {med(rs, 'evicted_s')} "
              f"| {med(rs, 'replaced_s')} | {max(len(r['terminating_at_end']) for r in rs)} |")


if __name__ == "__main__":
    main()
