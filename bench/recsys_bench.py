#!/usr/bin/env python3
"""The recommendation models side by side with TensorFlow (make bench-recsys; docs/trainer.md).

1. DeepFM on MovieLens-100k (examples/movielens/schema.yaml, RecBole's copy of the data in the
   tests' venv) with 2 parameter servers and 1, then 4 training replicas, by disttrain-trainer
   (`local`, asynchronous: dense variables by Adagrad on the servers, rows by their tables'
   Adagrad) and by TensorFlow 2.21's own ParameterServerStrategy (bench/tensorflow_deepfm.py: the
   same model, optimiser, split, batch and steps), --runs times each, interleaved. Reported: the
   test AUC over the whole test split and the training examples per second (global steps x batch
   / training time, start-up and evaluation excluded), medians, and the ratios the issue asks
   for: our AUC with 4 replicas against 1, ours against TensorFlow's, our examples/s against
   TensorFlow's.
2. Synthetic Criteo-shaped data (13 numeric, 26 categorical columns, trainer/data/synthetic_criteo.h)
   with DeepFM, 2 parameter servers and 1, 2 and 4 training replicas: examples per second and per
   replica. This machine has 2 cores for every process, so the scaling says how the runtime shares
   them, not how it scales over machines.

Usage: bench/recsys_bench.py --bin build/release/bin [--runs 3] [--only movielens,criteo]
Run with the tests' venv (tests/python/venv.sh): TensorFlow, scikit-learn and recbole."""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEPS, BATCH = 2000, 256
DEEPFM = ["--model", "deepfm", "--hidden", "64,32", "--mode", "downpour", "--local-steps", "1",
          "--learning-rate", "0.05", "--log-every", "0", "--metrics-address", "0"]


def movielens():
    spec = importlib.util.find_spec("recbole")
    return os.path.join(list(spec.submodule_search_locations)[0], "dataset_example", "ml-100k")


def events(stdout, kind):
    out = []
    for line in stdout.splitlines():
        line = line.split("] ", 1)[-1]
        if line.startswith("{") and f'"event":"{kind}"' in line:
            out.append(json.loads(line))
    return out


def ours(trainer, replicas, schema, data_dir, steps, batch, extra=()):
    """One local run: 2 ps, `replicas` training replicas (worker 0 is the chief), an evaluator
    over the whole test split."""
    with tempfile.TemporaryDirectory(prefix="recsys-bench-") as model_dir:
        cmd = [trainer, "local", "--ps", "2", "--workers", str(replicas), "--evaluator", "--",
               *DEEPFM, "--schema", schema, "--steps", str(steps), "--batch-size", str(batch),
               "--checkpoint-steps", str(steps), "--eval-examples", "1000000", "--model-dir", model_dir,
               *extra]
        if data_dir:
            cmd += ["--data-dir", data_dir]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}:\n{out.stderr[-3000:]}")
        done = [d for d in events(out.stdout, "done") if "train_seconds" in d][0]
        final = events(out.stdout, "eval")[-1]
        return {"auc": final["auc"], "log_loss": final["log_loss"], "test_examples": final["examples"],
                "examples_per_second": done["global_step"] * batch / done["train_seconds"],
                "train_seconds": done["train_seconds"]}


def tensorflow(replicas, steps):
    out = subprocess.run([sys.executable, os.path.join(HERE, "tensorflow_deepfm.py"), "--ps", "2",
                          "--workers", str(replicas), "--steps", str(steps)],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"tensorflow_deepfm.py exited {out.returncode}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def movielens_bench(trainer, runs):
    schema = os.path.join(ROOT, "examples", "movielens", "schema.yaml")
    results = {}
    for r in range(runs):
        for replicas in (1, 4):
            results.setdefault(("disttrain", replicas), []).append(
                ours(trainer, replicas, schema, movielens(), STEPS, BATCH))
            results.setdefault(("tensorflow", replicas), []).append(tensorflow(replicas, STEPS))
            print(json.dumps({"run": r, "replicas": replicas,
                              "disttrain": results[("disttrain", replicas)][-1],
                              "tensorflow": results[("tensorflow", replicas)][-1]}), file=sys.stderr, flush=True)
    for (framework, replicas), rs in sorted(results.items()):
        print(json.dumps({"bench": "movielens_deepfm", "framework": framework, "ps": 2, "replicas": replicas,
                          "runs": len(rs), "steps": STEPS, "batch_size": BATCH,
                          "auc": median(rs, "auc"), "aucs": [round(x["auc"], 4) for x in rs],
                          "examples_per_second": median(rs, "examples_per_second")}), flush=True)
    m = lambda f, n, k: median(results[(f, n)], k)
    print(json.dumps({"bench": "movielens_deepfm_ratios",
                      "auc_4_replicas_minus_1": m("disttrain", 4, "auc") - m("disttrain", 1, "auc"),
                      "auc_ours_minus_tensorflow_1": m("disttrain", 1, "auc") - m("tensorflow", 1, "auc"),
                      "auc_ours_minus_tensorflow_4": m("disttrain", 4, "auc") - m("tensorflow", 4, "auc"),
                      "examples_per_second_ours_over_tensorflow_1":
                          m("disttrain", 1, "examples_per_second") / m("tensorflow", 1, "examples_per_second"),
                      "examples_per_second_ours_over_tensorflow_4":
                          m("disttrain", 4, "examples_per_second") / m("tensorflow", 4, "examples_per_second")}),
          flush=True)


def criteo_bench(trainer, runs):
    with tempfile.TemporaryDirectory(prefix="criteo-schema-") as d:
        schema = os.path.join(d, "schema.yaml")
        with open(schema, "w") as f:
            f.write("format: synthetic-criteo\nrows: 2000000\ntest_fraction: 0.01\n"
                    "table_defaults: {dim: 16, optimizer: adagrad, learning_rate: 0.05}\n")
        for replicas in (1, 2, 4):
            rs = [ours(trainer, replicas, schema, "", 600, 1024) for _ in range(runs)]
            eps = median(rs, "examples_per_second")
            print(json.dumps({"bench": "criteo_synthetic_deepfm", "ps": 2, "replicas": replicas, "runs": runs,
                              "batch_size": 1024, "examples_per_second": eps,
                              "examples_per_second_per_replica": eps / replicas, "auc": median(rs, "auc")}),
                  flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "bin"))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--only", default="movielens,criteo")
    a = p.parse_args()
    trainer = os.path.join(a.bin, "disttrain-trainer")
    only = a.only.split(",")
    if "movielens" in only:
        movielens_bench(trainer, a.runs)
    if "criteo" in only:
        criteo_bench(trainer, a.runs)


if __name__ == "__main__":
    main()
