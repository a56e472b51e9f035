"""What the chief's copy of the parameter servers costs (--ps-copy-seconds, trainer/worker/
ps_copy.h): the same training run with the copy off and at its default (0.5 s), interleaved,
through real processes (`disttrain-trainer local`: 2 ps, 2 workers and the chief, asynchronous
Fashion-MNIST MLP, batch 64), for two model sizes (--hidden 100: 0.3 MB of variables; --hidden
2000: 6.4 MB); and DeepFM on synthetic Criteo-shaped data (26 embedding tables of 16 floats with
adagrad state, batch 1024), whose copy also keeps every embedding row (worker/table_copy.h),
merged from the rows each server changed since the last round.

Per run: the chief's exchange time per step (its push and pull through the servers, from its
done event: the push latency the copy's pulls could add), the job's step rate (global steps / the
chief's training seconds), the peak resident memory (VmHWM) of the chief (which holds the copy)
and of the parameter servers (which serve its pulls), and the chief's resident memory at its last
sample before it exited (its peak comes from loading the data, before the copy exists). Medians of --runs; the ratio copy/off
per figure. Usage:
  python3 bench/ps_copy_bench.py --bin build/release/bin [--runs 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time

CONTENDERS = {"copy-off": "0", "copy-0.5s": "0.5"}


def rss_mb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(next(l for l in f if l.startswith(field + ":")).split()[1]) / 1024
    except (FileNotFoundError, StopIteration, ProcessLookupError):
        return None


CRITEO_SCHEMA = ("format: synthetic-criteo\nrows: 2000000\ntest_fraction: 0.01\n"
                 "table_defaults: {dim: 16, optimizer: adagrad, learning_rate: 0.05}\n")


def model_args(model, steps, model_dir):
    """The trainer's flags for `model`: "mlp-<hidden>" or "deepfm"."""
    if model == "deepfm":
        schema = os.path.join(model_dir, "schema.yaml")
        with open(schema, "w") as f:
            f.write(CRITEO_SCHEMA)
        return ["--model", "deepfm", "--hidden", "64,32", "--schema", schema, "--mode", "downpour",
                "--local-steps", "1", "--batch-size", "1024", "--learning-rate", "0.05",
                "--eval-examples", "1000"]
    return ["--model", "mlp", "--hidden", model.removeprefix("mlp-"), "--mode", "async",
            "--batch-size", "64", "--learning-rate", "0.05"]


def run(bin_dir, model, steps, copy_seconds):
    with tempfile.TemporaryDirectory(prefix="disttrain-copy-bench-") as model_dir:
        proc = subprocess.Popen(
            [os.path.join(bin_dir, "disttrain-trainer"), "local", "--ps", "2", "--workers", "2", "--chief", "--",
             *model_args(model, steps, model_dir), "--steps", str(steps), "--log-every", "0",
             "--metrics-address", "0", "--checkpoint-steps", str(steps), "--model-dir", model_dir,
             "--ps-copy-seconds", copy_seconds, *(["--ps-copy-tables"] if model == "deepfm" else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stderr, peaks, last = [], {}, {}

        def read_stderr():
            for line in proc.stderr:
                stderr.append(line)
        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        stdout_lines = []
        out_reader = threading.Thread(target=lambda: stdout_lines.extend(proc.stdout), daemon=True)
        out_reader.start()
        while proc.poll() is None:  # VmHWM is gone with the process: read it while it runs
            for line in list(stderr):
                m = re.search(r"\"started task\" task=(\S+) pid=(\d+)", line)
                if m:
                    peak, now = rss_mb(int(m.group(2)), "VmHWM"), rss_mb(int(m.group(2)), "VmRSS")
                    if peak is not None and now is not None:
                        peaks[m.group(1)] = max(peaks.get(m.group(1), 0), peak)
                        last[m.group(1)] = now
            time.sleep(0.2)
        reader.join()
        out_reader.join()
        if proc.returncode != 0:
            raise RuntimeError(f"training failed ({proc.returncode}): {''.join(stderr[-10:])}")
    done = next(json.loads(m.group(2)) for line in stdout_lines
                if (m := re.match(r"^(\[chief-0\] )?(\{.*\"event\":\"done\".*\})\s*$", line)))
    copying = any("keeping a copy of the parameter servers" in l for l in stderr)
    if copying != (copy_seconds != "0"):
        raise RuntimeError(f"--ps-copy-seconds {copy_seconds}, but the chief {'did' if copying else 'did not'} copy")
    rows = [int(m.group(1)) for l in stderr if (m := re.search(r'"saved the embedding tables".* rows=(\d+)', l))]
    return {"model": model, "table_rows": rows[-1] if rows else 0, "copy_seconds": float(copy_seconds), "steps": done["global_step"],
            "exchange_ms_per_step": round(1000 * done["exchange_seconds"] / done["global_step"], 3),
            "steps_per_s": round(done["global_step"] / done["train_seconds"], 1),
            "chief_peak_rss_mb": round(peaks.get("chief-0", 0), 1),
            "chief_last_rss_mb": round(last.get("chief-0", 0), 1),
            "ps_peak_rss_mb": round(max(peaks.get("ps-0", 0), peaks.get("ps-1", 0)), 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=3)
    keys = ["exchange_ms_per_step", "steps_per_s", "chief_peak_rss_mb", "chief_last_rss_mb", "ps_peak_rss_mb",
            "table_rows"]
    parser.add_argument("--models", default="mlp-100,mlp-2000,deepfm")
    args = parser.parse_args()
    rows = []
    steps_of = {"mlp-100": 3000, "mlp-2000": 600, "deepfm": 600}
    for hidden in args.models.split(","):
        steps = steps_of[hidden]
        results = {name: [] for name in CONTENDERS}
        for r in range(args.runs):  # interleaved: a drift of the machine hits both
            for name, seconds in CONTENDERS.items():
                result = run(args.bin, hidden, steps, seconds)
                result.update(contender=name, run=r)
                print(json.dumps(result), flush=True)
                results[name].append(result)
        med = {name: {k: statistics.median(x[k] for x in results[name]) for k in keys} for name in CONTENDERS}
        for name in CONTENDERS:
            rows.append((hidden, name, med[name]))
        rows.append((hidden, "ratio copy/off", {k: round(med["copy-0.5s"][k] / med["copy-off"][k], 3)
                                                 if med["copy-off"][k] else "-" for k in keys}))
    print(f"\nmedians of {args.runs} runs:\n")
    print("| model | contender | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for hidden, name, m in rows:
        print(f"| {hidden} | {name} | " + " | ".join(str(m[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
