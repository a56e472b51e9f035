"""Scaling of the parameter-server data path with workers and parameter servers, and a plot.

1. Aggregate push+pull throughput: `trainer_bench --only scaling` (16 MiB model, servers and
   workers on loopback in one process; 1/2/4/8 workers x 1/2/4 parameter servers).
2. Fashion-MNIST MLP examples per second through real processes: `disttrain-trainer local` with
   the same grid, asynchronous mode, batch 64; rate = global steps x batch / the chief's training
   seconds (from its first step to its last, so process start-up and data loading are left out).

Medians of --runs runs. Prints JSON lines and writes docs/ps_scaling.png (matplotlib; the venv
of tests/python/venv.sh). Usage (part of `make bench`):
  python bench/ps_scaling.py --bin build/release/bin
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

WORKERS = [1, 2, 4, 8]
SERVERS = [1, 2, 4]


def transport(bin_dir):
    out = subprocess.run([os.path.join(bin_dir, "trainer_bench"), "--only", "scaling"], capture_output=True,
                         text=True, check=True, timeout=1800)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        print(json.dumps(r), flush=True)
    return {(r["ps"], r["workers"]): r["aggregate_gb_per_s"] for r in rows}


def mlp_rate(bin_dir, ps, workers, steps, batch):
    with tempfile.TemporaryDirectory(prefix="disttrain-scaling-") as model_dir:
        # worker 0 is the chief: `workers` training replicas in all.
        out = subprocess.run([os.path.join(bin_dir, "disttrain-trainer"), "local", "--ps", str(ps), "--workers",
                              str(workers), "--", "--model", "mlp", "--mode", "async", "--steps", str(steps),
                              "--batch-size", str(batch), "--learning-rate", "0.1", "--log-every", "0",
                              "--checkpoint-steps", str(steps), "--model-dir", model_dir],
                             capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"ps={ps} workers={workers} exited {out.returncode}:\n{out.stderr[-2000:]}")
    for line in out.stdout.splitlines():
        payload = line.split("] ", 1)[-1]
        if payload.startswith("{") and '"done"' in payload:
            done = json.loads(payload)
            return done["global_step"] * batch / done["train_seconds"]
    raise RuntimeError("no done event")


def plot(gbps, examples, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for ps in SERVERS:
        a.plot(WORKERS, [gbps[(ps, w)] for w in WORKERS], marker="o", label=f"{ps} ps")
        b.plot(WORKERS, [examples[(ps, w)] / 1000 for w in WORKERS], marker="o", label=f"{ps} ps")
    a.set(title="push+pull, 16 MiB model (loopback)", xlabel="workers", ylabel="aggregate GB/s", xticks=WORKERS)
    b.set(title="Fashion-MNIST MLP, async, batch 64", xlabel="workers", ylabel="thousand examples / s",
          xticks=WORKERS)
    for ax in (a, b):
        ax.grid(alpha=0.3)
        ax.legend()
        ax.set_ylim(bottom=0)
    fig.suptitle(f"disttrain parameter servers on one machine ({os.cpu_count()} cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default="build/release/bin")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--plot", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../docs/ps_scaling.png"))
    args = p.parse_args()
    gbps = transport(args.bin)
    examples = {}
    for ps in SERVERS:
        for workers in WORKERS:
            rates = [mlp_rate(args.bin, ps, workers, args.steps, args.batch) for _ in range(args.runs)]
            examples[(ps, workers)] = statistics.median(rates)
            print(json.dumps({"bench": "mlp_scaling", "ps": ps, "workers": workers, "mode": "async",
                              "batch_size": args.batch, "runs": args.runs,
                              "examples_per_s": examples[(ps, workers)]}), flush=True)
    plot(gbps, examples, args.plot)
    print(json.dumps({"bench": "ps_scaling_plot", "path": os.path.relpath(args.plot)}))


if __name__ == "__main__":
    main()
