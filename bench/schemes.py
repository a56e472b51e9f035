"""Every training scheme on Fashion-MNIST with 1, 2 and 4 workers: test accuracy against wall time
and against global steps, a plot (docs/schemes.png) and a table (docs/trainer.md).

Each run is `disttrain-trainer local --ps 2 --workers N --evaluator` with the scheme's flags from
tests/trainer/schemes_test.py (the same hyper-parameters the convergence tests use), checkpoints
every tenth of the run; the evaluator scores each on the 10,000 test images, and the time is when
its line arrived, counted from the launch (process start-up and data loading included).
--steps counts commits: schemes with local steps compute --local-steps batches per commit.

Usage (part of `make bench`; matplotlib from the venv of tests/python/venv.sh):
  python bench/schemes.py --bin build/release/bin [--workers 1,2,4] [--only agn,sync] [--write-docs]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../tests/trainer"))
from schemes_test import SCHEMES  # noqa: E402  (the tested hyper-parameters)

DOCS = os.path.join(HERE, "../docs/trainer.md")
BEGIN, END = "<!-- bench-schemes:begin -->", "<!-- bench-schemes:end -->"


def variants(workers):
    """(label, mode, flags) for every scheme; sync also with one learning rate per worker."""
    out = [(mode, mode, flags) for mode, (flags, _) in SCHEMES.items()]
    if workers > 1:
        lr = float(SCHEMES["sync"][0][SCHEMES["sync"][0].index("--learning-rate") + 1])
        rates = [lr * (1.5 - i / (workers - 1)) for i in range(workers)]  # 1.5 lr down to 0.5 lr
        out.append(("sync-rates", "sync", [*SCHEMES["sync"][0], "--worker-learning-rates",
                                           ",".join(f"{r:g}" for r in rates)]))
    return out


def run_one(bin_dir, mode, flags, workers):
    steps = int(flags[flags.index("--steps") + 1])
    with tempfile.TemporaryDirectory(prefix="disttrain-schemes-") as model_dir:
        start = time.monotonic()
        p = subprocess.Popen([os.path.join(bin_dir, "disttrain-trainer"), "local", "--ps", "2", "--workers",
                              str(workers), "--evaluator", "--", "--model", "mlp", "--hidden", "100",
                              "--batch-size", "64", "--log-every", "0", "--model-dir", model_dir,
                              "--checkpoint-steps", str(max(1, steps // 10)), "--mode", mode, *flags],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        evals, last = [], None
        for line in p.stdout:
            m = re.match(r"^(\[[^\]]+\] )?(\{.*\})\s*$", line)
            if not m:
                continue
            j = json.loads(m.group(2))
            if j.get("event") == "eval":
                evals.append({"step": j["global_step"], "accuracy": j["accuracy"],
                              "seconds": round(time.monotonic() - start, 2)})
            last = j
        code = p.wait()
    return {"exit_code": code, "seconds": round(time.monotonic() - start, 1),
            "accuracy": last.get("accuracy") if last else None, "global_step": last.get("global_step") if last else None,
            "evals": evals}


def plot(results, worker_counts, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(worker_counts), 2, figsize=(13, 4.2 * len(worker_counts)), squeeze=False)
    for row, n in enumerate(worker_counts):
        for label, r in sorted(results.items()):
            if label[1] != n or not r["evals"]:
                continue
            ev = [e for e in r["evals"] if e["step"] > 0]
            axes[row][0].plot([e["seconds"] for e in ev], [e["accuracy"] for e in ev], marker=".", label=label[0])
            axes[row][1].plot([e["step"] for e in ev], [e["accuracy"] for e in ev], marker=".", label=label[0])
        for col, xlabel in enumerate(["wall time (s)", "global step (commits)"]):
            ax = axes[row][col]
            ax.set_title(f"{n} worker{'s' if n > 1 else ''}: test accuracy vs {xlabel}")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("test accuracy")
            ax.set_ylim(0.6, 0.9)
            ax.grid(alpha=0.3)
        axes[row][1].legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def table(results, worker_counts):
    labels = sorted({k[0] for k in results}, key=lambda l: list(SCHEMES).index(l) if l in SCHEMES else 99)
    head = "| scheme | " + " | ".join(f"{n} worker{'s' if n > 1 else ''}: accuracy / s" for n in worker_counts) + " |"
    lines = [head, "|---" * (len(worker_counts) + 1) + "|"]
    for label in labels:
        cells = []
        for n in worker_counts:
            r = results.get((label, n))
            cells.append("—" if r is None else
                         (f"{r['accuracy']:.4f} / {r['seconds']:.0f}" if r["exit_code"] == 0 and r["accuracy"] is not None
                          else f"failed ({r['exit_code']})"))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(HERE, "../build/release/bin"))
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--only", default="", help="comma-separated labels (e.g. agn,sync-rates)")
    p.add_argument("--plot", default=os.path.join(HERE, "../docs/schemes.png"))
    p.add_argument("--write-docs", action="store_true", help=f"replace the table in {DOCS}")
    a = p.parse_args()
    worker_counts = [int(w) for w in a.workers.split(",")]
    only = set(filter(None, a.only.split(",")))
    results = {}
    for n in worker_counts:
        for label, mode, flags in variants(n):
            if only and label not in only:
                continue
            r = run_one(a.bin, mode, flags, n)
            results[(label, n)] = r
            print(json.dumps({"bench": "schemes", "scheme": label, "workers": n, **r}), flush=True)
    plot(results, worker_counts, a.plot)
    t = table(results, worker_counts)
    print(t)
    if a.write_docs:
        doc = open(DOCS).read()
        i, j = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        stamp = time.strftime("%Y-%m-%d")
        doc = doc[:i] + f"\n_Measured {stamp} with `make bench-schemes` (one run per cell; 2 cores)._\n\n{t}\n" + doc[j:]
        open(DOCS, "w").write(doc)


if __name__ == "__main__":
    main()
