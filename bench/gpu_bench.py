"""GPU workers against the CPU on one machine, in one run (label gpu; issue #38). JSON lines:

  gpu_worker          one worker (`local --ps 1 --workers 1`, sync, one tower) with --device cpu and
                      cuda: train_seconds (chief's first step to its last), step_ms, examples/s;
                      for the quickstart MLP (--hidden 100 --batch-size 64) and a big one
                      (--hidden 2048,2048 --batch-size 512)
  gpu_speedup         cuda examples/s over cpu examples/s, per model
  gpu_compute         from gpu_compute_bench: the forward and backward pass alone (compute_ms,
                      device time on resident data) and one tower call with its copies (call_ms)
  gpu_step_vs_compute the cuda worker's step_ms over compute_ms: what the step costs beyond the math
                      (parameter-server push/pull, copies, the host's share)
  gpu_step_breakdown  where a cuda worker's step goes, for --hidden 2048,2048 at batch sizes 512 to
                      32768 over 1 and 4 parameter servers: step_ms, exchange_ms (push, the wait
                      for the step, pull: the trainer's done event), round_ms (the tower call:
                      upload, compute, download), compute_ms (gpu_compute_bench at that batch),
                      step_over_compute, and exchange_gb_per_s: the model's bytes both ways over
                      exchange_ms (the exchange's rate; what overlapping it with compute could
                      hide is at most round_ms per step)
  gpu_issue_38        the issue's runs: `local --ps 2 --workers 2 --chief`, sync, 2 towers, cpu and
                      cuda, the quickstart MLP (1000 steps) and --hidden 1024 --batch-size 512 (100)
  gpu_sync_accuracy   sync training with --device cuda to the usual test accuracy (0.84+ expected):
                      `local --ps 2 --workers 2 --chief --evaluator`, 1,500 steps (as
                      tests/trainer's CPU test; the default 1,000 end near 0.82-0.84)

Each trainer run's stderr goes to <logs>/<name>.log. Standard library only (it runs on GPU machines
that have nothing but python3).

Usage: python3 bench/gpu_bench.py --bin DIR [--data-dir DIR] [--logs DIR] [--quick]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def emit(record, out):
    line = json.dumps(record)
    print(line, flush=True)
    if out:
        out.write(line + "\n")
        out.flush()


def run_local(args, name, launcher, flags, timeout):
    """One `disttrain-trainer local` run: its events, summary, exit code and wall seconds."""
    trainer = os.path.join(args.bin, "disttrain-trainer")
    with tempfile.TemporaryDirectory(prefix="disttrain-gpu-bench-") as model_dir:
        cmd = [trainer, "local", *launcher, "--", "--model", "mlp", "--log-every", "0",
               "--model-dir", model_dir, *flags]
        if args.data_dir:
            cmd += ["--data-dir", args.data_dir]
        log_path = os.path.join(args.logs, name + ".log")
        start = time.monotonic()
        with open(log_path, "w") as log:
            log.write(" ".join(cmd) + "\n")
            log.flush()
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True, timeout=timeout)
                stdout, code = p.stdout, p.returncode
            except subprocess.TimeoutExpired as e:
                stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                code = "timeout"
            log.write(stdout)
    events = []
    for line in stdout.splitlines():
        m = re.match(r"^(\[[^\]]+\] )?(\{.*\})\s*$", line)
        if m:
            try:
                events.append(json.loads(m.group(2)))
            except ValueError:
                pass
    done = next((e for e in events if e.get("event") == "done"), {})
    summary = next((e for e in reversed(events) if e.get("event") == "summary"), {})
    return {"exit_code": code, "wall_seconds": round(time.monotonic() - start, 2),
            "train_seconds": done.get("train_seconds"), "global_step": done.get("global_step"),
            "exchange_seconds": done.get("exchange_seconds"), "round_seconds": done.get("round_seconds"),
            "loss": done.get("loss"), "accuracy": summary.get("accuracy"), "log": log_path}


def worker_runs(args, out):
    """One worker, one tower, cpu against cuda; returns {hidden: cuda step_ms}."""
    configs = [("100", 64, 1000, 1000), ("2048,2048", 512, 5 if args.quick else 10, 100 if args.quick else 300)]
    step_ms = {}
    for hidden, batch, cpu_steps, cuda_steps in configs:
        rates = {}
        for device, steps in (("cpu", cpu_steps), ("cuda", cuda_steps)):
            name = f"worker-{device}-{hidden.replace(',', 'x')}-b{batch}"
            r = run_local(args, name, ["--ps", "1", "--workers", "1"],
                          ["--mode", "sync", "--device", device, "--local-replicas", "1", "--hidden", hidden,
                           "--batch-size", str(batch), "--steps", str(steps), "--checkpoint-steps", str(steps)],
                          timeout=120)
            rec = {"bench": "gpu_worker", "device": device, "hidden": hidden, "batch_size": batch, "steps": steps, **r}
            if r["train_seconds"] and r["global_step"]:
                # train_seconds runs from the start of the chief's first step to the end of its last.
                steps_done = r["global_step"]
                rec["step_ms"] = round(r["train_seconds"] * 1e3 / steps_done, 3)
                rec["examples_per_second"] = round(batch * steps_done / r["train_seconds"], 1)
                rates[device] = rec["examples_per_second"]
                if device == "cuda":
                    step_ms[(hidden, batch)] = rec["step_ms"]
            emit(rec, out)
        if len(rates) == 2:
            emit({"bench": "gpu_speedup", "hidden": hidden, "batch_size": batch,
                  "cpu_examples_per_second": rates["cpu"], "cuda_examples_per_second": rates["cuda"],
                  "cuda_over_cpu": round(rates["cuda"] / rates["cpu"], 2)}, out)
    return step_ms


def compute_runs(args, out, step_ms):
    keys = list(step_ms) or [("100", 64), ("2048,2048", 512)]
    cmd = [os.path.join(args.bin, "gpu_compute_bench"), "--hidden", ";".join(h for h, _ in keys),
           "--batch-size", ";".join(str(b) for _, b in keys)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    with open(os.path.join(args.logs, "gpu_compute_bench.log"), "w") as log:
        log.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        emit({"bench": "gpu_compute", "exit_code": p.returncode, "error": p.stderr[-500:]}, out)
        return
    for line in p.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        emit(rec, out)
        key = (rec["hidden"], rec["batch_size"])
        if key in step_ms:
            emit({"bench": "gpu_step_vs_compute", "hidden": rec["hidden"], "batch_size": rec["batch_size"],
                  "step_ms": step_ms[key], "compute_ms": round(rec["compute_ms"], 4),
                  "call_ms": round(rec["call_ms"], 4),
                  "step_over_compute": round(step_ms[key] / rec["compute_ms"], 1),
                  "step_over_call": round(step_ms[key] / rec["call_ms"], 2)}, out)


def compute_ms_at(args, hidden, batches):
    """{batch: (compute_ms, call_ms)} from gpu_compute_bench for one model."""
    cmd = [os.path.join(args.bin, "gpu_compute_bench"), "--hidden", ";".join(hidden for _ in batches),
           "--batch-size", ";".join(str(b) for b in batches)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    with open(os.path.join(args.logs, "gpu_compute_bench-breakdown.log"), "w") as log:
        log.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    found = {}
    for line in p.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        found[rec["batch_size"]] = (rec["compute_ms"], rec["call_ms"], rec["variables_mib"])
    return found


def breakdown_runs(args, out):
    hidden = "2048,2048"
    if args.quick:
        runs = [(4, 512), (4, 4096)]
    else:
        runs = [(1, 512), (1, 16384)] + [(4, b) for b in (512, 2048, 8192, 16384, 32768)]
    compute = compute_ms_at(args, hidden, sorted({b for _, b in runs}))
    for ps, batch in runs:
        steps = max(40, min(300, 150000 // batch))
        r = run_local(args, f"breakdown-ps{ps}-b{batch}", ["--ps", str(ps), "--workers", "1"],
                      ["--mode", "sync", "--device", "cuda", "--local-replicas", "1", "--hidden", hidden,
                       "--batch-size", str(batch), "--steps", str(steps), "--checkpoint-steps", str(steps)],
                      timeout=180)
        rec = {"bench": "gpu_step_breakdown", "hidden": hidden, "batch_size": batch, "ps": ps,
               "steps": steps, "exit_code": r["exit_code"], "log": r["log"]}
        n = r["global_step"]
        if r["train_seconds"] and n and r["exchange_seconds"] is not None:
            rec.update(step_ms=round(r["train_seconds"] * 1e3 / n, 3),
                       exchange_ms=round(r["exchange_seconds"] * 1e3 / n, 3),
                       round_ms=round(r["round_seconds"] * 1e3 / n, 3),
                       examples_per_second=round(batch * n / r["train_seconds"], 1))
            if batch in compute:
                compute_ms, call_ms, mib = compute[batch]
                rec.update(compute_ms=round(compute_ms, 4), call_ms=round(call_ms, 4),
                           step_over_compute=round(rec["step_ms"] / compute_ms, 2),
                           exchange_gb_per_s=round(2 * mib * (1 << 20) / (rec["exchange_ms"] * 1e6), 2))
        emit(rec, out)


def issue_runs(args, out):
    for label, flags in (("quickstart", ["--hidden", "100", "--batch-size", "64", "--steps", "1000"]),
                         ("hidden1024-b512", ["--hidden", "1024", "--batch-size", "512", "--steps", "100"])):
        for device in ("cpu", "cuda"):
            r = run_local(args, f"issue38-{label}-{device}", ["--ps", "2", "--workers", "2", "--chief"],
                          ["--mode", "sync", "--device", device, "--local-replicas", "2",
                           "--checkpoint-steps", "1000", *flags], timeout=120)
            emit({"bench": "gpu_issue_38", "model": label, "device": device, **r}, out)


def accuracy_run(args, out):
    r = run_local(args, "sync-accuracy-cuda", ["--ps", "2", "--workers", "2", "--chief", "--evaluator"],
                  ["--mode", "sync", "--device", "cuda", "--steps", "1500"], timeout=180)
    acc = r["accuracy"]
    emit({"bench": "gpu_sync_accuracy", "device": "cuda", **r,
          "reaches_0_84": acc is not None and acc >= 0.84}, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="folder of disttrain-trainer and gpu_compute_bench")
    ap.add_argument("--data-dir", default="", help="Fashion-MNIST IDX files (default: the trainer's)")
    ap.add_argument("--logs", default=".", help="folder for each run's log")
    ap.add_argument("--out", default="", help="also append the JSON lines to this file")
    ap.add_argument("--quick", action="store_true", help="fewer steps of the big model")
    ap.add_argument("--only", default="worker,compute,breakdown,issue,accuracy")
    args = ap.parse_args()
    os.makedirs(args.logs, exist_ok=True)
    only = set(args.only.split(","))
    out = open(args.out, "a") if args.out else None
    step_ms = worker_runs(args, out) if "worker" in only else {}
    if "compute" in only:
        compute_runs(args, out, step_ms)
    if "breakdown" in only:
        breakdown_runs(args, out)
    if "issue" in only:
        issue_runs(args, out)
    if "accuracy" in only:
        accuracy_run(args, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
