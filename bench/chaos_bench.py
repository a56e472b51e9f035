"""Goodput under the chaos schedule of issue #61 (tests/e2e/chaos.py), ours against Kubeflow's
training-operator v1.9 (the peer), on the real node. The same trainer image and job (Fashion-MNIST
MLP, asynchronous, 25,000 steps, a chief, 2 ps, 2 workers) runs as

  disttrain   a DistributedTraining queued by Kueue (the operator with --kueue), oomPolicy on
              (memoryFactor 2), workers restartPolicy ExitCode, ps OnFailure;
  peer        a TFJob under the training-operator, every role OnFailure (the kubelet restarts a
              killed container in place, the quickest way back the peer has).

Each contender runs the job undisturbed, then under the schedule (ps 1 SIGKILLed at 8 s, worker 1
OOM-killed at 18 s, the job evicted and admitted again at 28 s), --runs times, interleaved.
Figures per chaos run: goodput (steps kept / steps computed), wall time against the same
contender's undisturbed run before it, and per fault the seconds to recover and the steps lost.
Prints one JSON line per run, then a table of medians (docs/operations.md).

  python3 bench/chaos_bench.py [--runs 3] [--only disttrain,peer]
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import chaos  # noqa: E402
import realnode  # noqa: E402
from chaos_realnode_test import queue  # noqa: E402
from crd_test import install_crd  # noqa: E402
from kube import Namespace, apply, kubectl  # noqa: E402
from kueue_process import start_with_operator, stop_with_operator  # noqa: E402
from peer_process import Peer, build_peer  # noqa: E402
from realnode_test import shared_dir  # noqa: E402

CONTENDERS = ("disttrain", "peer")


def run_once(contender, schedule):
    with Namespace("chaosbench") as ns:
        cluster_objects = []
        try:
            if contender == "disttrain":
                cluster_objects = queue(ns, f"chaos-{ns.rsplit('-', 1)[1]}")
                apply(chaos.distributed_training("chaos", shared_dir(), queue="lq"), ns)
                target = chaos.Target(ns, "chaos", "dtr")
            else:
                apply(chaos.tfjob("chaos", shared_dir()), ns)
                target = chaos.Target(ns, "chaos", "tfjob")
            figures = chaos.run(target, schedule)
        finally:
            kubectl("delete", "dtr,tfjob", "--all", "-n", ns, "--wait=true", "--timeout=120s", check=False)
            for kind, name in cluster_objects:
                kubectl("delete", kind, name, "--ignore-not-found", "--wait=false", check=False)
    figures.pop("restores", None)
    figures.pop("chief_log", None)
    return dict(contender=contender, chaos=bool(schedule), **figures)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default=",".join(CONTENDERS))
    args = parser.parse_args()
    only = args.only.split(",")
    if any(c not in CONTENDERS for c in only):
        parser.error(f"--only: some of {CONTENDERS}")
    realnode.exit_unless_up()
    install_crd()
    kueue = operator = peer = None
    try:
        if "disttrain" in only:
            kueue, operator = start_with_operator("kueue-chaos-bench", "chaos-bench")
        if "peer" in only:
            folder = build_peer()
            Peer.install(folder)
            peer = Peer(folder, []).start()
        results = {c: [] for c in only}
        for _ in range(args.runs):
            for c in only:
                calm = run_once(c, ())
                print(json.dumps(calm), flush=True)
                r = run_once(c, chaos.SCHEDULE)
                r["wall_vs_undisturbed"] = round(r["wall_s"] / calm["wall_s"], 3)
                print(json.dumps(r), flush=True)
                results[c].append(r)
    finally:
        stop_with_operator(kueue, operator)
        if peer:
            peer.stop()

    def med(rs, get):
        values = [v for v in (get(r) for r in rs) if v is not None]
        return f"{statistics.median(values):g}" if values else "-"
    print("\n| | disttrain | peer |\n|---|---|---|")
    rows = [("succeeded", lambda r: 1 if r["outcome"] == "Succeeded" else 0),
            ("goodput (steps kept / computed)", lambda r: r["goodput"]),
            ("wall time / undisturbed", lambda r: r["wall_vs_undisturbed"])]
    for fault, _ in chaos.SCHEDULE:
        rows.append((f"{fault}: seconds to recover", lambda r, f=fault: r["faults"].get(f, {}).get("recover_s")))
        if fault != "worker-oom":
            rows.append((f"{fault}: steps lost", lambda r, f=fault: r["faults"].get(f, {}).get("steps_lost")))
    for label, get in rows:
        print(f"| {label} | " + " | ".join(med(results.get(c, []), get) for c in CONTENDERS) + " |")


if __name__ == "__main__":
    main()
