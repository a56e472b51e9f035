"""What status.progress costs: the operator's CPU and the status writes per job while 100 jobs
train, with progress off and on (issue #60's figures). The bench-peer shape on kwok nodes: 100
jobs of 7 pods (chief, 2 PS, 3 workers, evaluator), cleanPodPolicy Running, release build.

kwok's pods run no process, so nothing would answer the operator's readings of a chief's
/metrics. This bench answers them for real: it makes kwok's pod addresses local to this machine (a
`local` route of 10.0.0.0/16, removed at the end) and serves the trainer's
/metrics on port 9095 of every address from one HTTP server, so the operator's HTTP client, its
parsing and its status writes do exactly what they do in a cluster. Each chief's page has the
three progress gauges advancing at 20 steps/s (every reading changes the progress, the worst
case for writes) among the other series a chief serves (RPC histograms, loss, checkpoint: about
4 KB, the size of a real chief's page).

Per run, in a window of --window seconds that starts once every chief is running: the operator's CPU seconds (from /proc) and per running job per minute; the status
writes (PUT/PATCH of distributedtrainings[/status], from kube-apiserver's own counters) per job
per minute; the readings the fake chiefs served per job per minute. Then the chiefs succeed and
the parameter servers go; over the job's whole life: status writes per job (the scale bench's
2.6 per job is a 15 s job with progress off). One JSON line per run, then medians per contender.

  python3 bench/progress_bench.py (as root) --bin build/release/bin [--runs 3] [--window 120]
"""
import argparse
import http.server
import ipaddress
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "peer"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
from kube import get_json, wait_until  # noqa: E402
from crd_test import install_crd  # noqa: E402
from peer_bench import BenchNamespace, Ours, apiserver_writes, submit  # noqa: E402
from scale_harness import PodWatcher, job_manifest, proc_usage  # noqa: E402

PORT = 9095  # the trainer's default metrics port, which the operator reads
POD_CIDR = "10.0.0.0/16"  # kwok's pod addresses (10.0.0.1/24 at its defaults, and on)
STEPS_PER_SECOND = 20
TARGET_STEPS = 1_000_000
JOBS = 100

CONTENDERS = {
    "progress-off": ["--progress-interval-seconds=0"],
    "progress-30s": [],  # the defaults: every 30 s per job, at most 10 readings/s in all
    # 100 jobs every 5 s is 20 readings/s: the 10/s bound stretches each job's interval to 10 s.
    "progress-5s": ["--progress-interval-seconds=5"],
}


def filler_series():
    """The series a chief serves beside the progress gauges (trainer/metrics), as text."""
    lines = []
    for method in ("push_pull", "pull", "push"):
        lines += [f"# TYPE disttrain_trainer_rpc_duration_seconds histogram"]
        total = 0
        for le in ("0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
                   "1", "2.5", "5", "+Inf"):
            total += 17
            lines.append(f'disttrain_trainer_rpc_duration_seconds_bucket{{method="{method}",le="{le}"}} {total}')
        lines += [f'disttrain_trainer_rpc_duration_seconds_sum{{method="{method}"}} 1.234',
                  f'disttrain_trainer_rpc_duration_seconds_count{{method="{method}"}} {total}',
                  f'disttrain_trainer_rpc_errors_total{{method="{method}"}} 0',
                  f'disttrain_trainer_rpc_bytes_total{{method="{method}",direction="sent"}} 123456789',
                  f'disttrain_trainer_rpc_bytes_total{{method="{method}",direction="received"}} 123456789']
    lines += ["# TYPE disttrain_trainer_loss gauge", "disttrain_trainer_loss 0.4321",
              "# TYPE disttrain_trainer_checkpoint_step gauge", "disttrain_trainer_checkpoint_step 1200",
              "# TYPE disttrain_trainer_checkpoint_age_seconds gauge", "disttrain_trainer_checkpoint_age_seconds 4.2",
              "# TYPE disttrain_trainer_examples_per_second gauge", "disttrain_trainer_examples_per_second 1280",
              "# TYPE disttrain_trainer_local_steps_total counter", "disttrain_trainer_local_steps_total 5000"]
    return "\n".join(lines) + "\n"


class FakeChiefs:
    """One HTTP server on 0.0.0.0:9095 answering for every chief address: the page of the chief
    whose address the request came to, its step advancing from the first time it was read."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started, self.readings = {}, {}
        self.filler = filler_series()
        chiefs = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                ip = self.connection.getsockname()[0]
                now = time.monotonic()
                with chiefs.lock:
                    start = chiefs.started.setdefault(ip, now)
                    chiefs.readings[ip] = chiefs.readings.get(ip, 0) + 1
                step = int((now - start) * STEPS_PER_SECOND)
                body = (f"# TYPE disttrain_trainer_global_step gauge\ndisttrain_trainer_global_step {step}\n"
                        f"# TYPE disttrain_trainer_target_steps gauge\ndisttrain_trainer_target_steps {TARGET_STEPS}\n"
                        "# TYPE disttrain_trainer_examples_per_global_step gauge\n"
                        "disttrain_trainer_examples_per_global_step 64\n" + chiefs.filler).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.daemon_threads = True
        self.server = http.server.ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def total_readings(self):
        with self.lock:
            return sum(self.readings.values())

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ChiefAddresses:
    """kwok's pod IPs (POD_CIDR) made local to this machine for the run: a `local` route (Linux's
    AnyIP), so the server on 0.0.0.0 answers each chief at its own address from its first reading,
    without waiting for its IP to be known. Nothing else uses these addresses during the bench (the
    Service range overlaps them, but no pod of the real node runs and nothing here has kube-proxy)."""

    def __init__(self):
        subprocess.run(["ip", "route", "del", "local", POD_CIDR, "dev", "lo"], capture_output=True)
        subprocess.run(["ip", "route", "add", "local", POD_CIDR, "dev", "lo"], check=True)

    @staticmethod
    def chiefs(ns):
        pods = get_json("pods", "-n", ns)["items"]
        chiefs = {p["metadata"]["name"]: p.get("status", {}).get("podIP") for p in pods
                  if p["metadata"]["name"].endswith("-chief-0")}
        outside = [a for a in chiefs.values() if a and ipaddress.ip_address(a) not in ipaddress.ip_network(POD_CIDR)]
        if outside:
            raise RuntimeError(f"chief addresses outside {POD_CIDR}: {outside[:5]}")
        return chiefs

    def close(self):
        subprocess.run(["ip", "route", "del", "local", POD_CIDR, "dev", "lo"], capture_output=True)


def status_writes(counts):
    return sum(n for k, n in counts.items() if k.split(" ")[0] in ("PUT", "PATCH")
               and k.split(" ")[1].split(".")[0] in ("distributedtrainings", "distributedtrainings/status"))


def run(name, binary, flags, window, chiefs):
    operator = Ours(binary, flags)
    addresses = ChiefAddresses()
    # The chiefs succeed after the window (and the time to reach it): the job's whole life.
    chief_seconds = 90 + window
    with BenchNamespace("progress") as ns:
        items = [job_manifest(f"job-{i:03d}", chief_seconds + i * 0.3) for i in range(JOBS)]
        for item in items:
            item["spec"].setdefault("runPolicy", {})["cleanPodPolicy"] = "Running"
        operator.start()
        watcher = PodWatcher(ns)
        try:
            pid = operator.proc.pid
            writes_start = apiserver_writes()
            start = time.monotonic()
            submit(items, ns)

            wait_until("every chief running", lambda: all(
                f"job-{i:03d}-chief-0" in watcher.running for i in range(JOBS)), timeout=300)
            by_pod = addresses.chiefs(ns)
            ready = time.monotonic() - start
            duplicated = JOBS - len(set(by_pod.values()))
            cpu0, _ = proc_usage(pid)
            writes0, readings0 = apiserver_writes(), chiefs.total_readings()
            time.sleep(window)
            cpu1, _ = proc_usage(pid)
            writes1, readings1 = apiserver_writes(), chiefs.total_readings()
            first_end = min(watcher.succeeded.values(), default=None)
            if first_end is not None and first_end - start < ready + window:
                raise RuntimeError(f"a chief succeeded {first_end - start:.0f} s in, inside the window")
            wait_until(f"all {JOBS} jobs to succeed", lambda: sum(
                j.get("status", {}).get("state") == "Succeeded"
                for j in get_json("distributedtrainings", "-n", ns)["items"]) == JOBS,
                timeout=chief_seconds + 300, interval=2)
            wait_until("every parameter server to be deleted", lambda: all(
                f"job-{i:03d}-ps-{k}" in watcher.deleting for i in range(JOBS) for k in range(2)), timeout=300)
            life = time.monotonic() - start
            writes_end = apiserver_writes()
            progressed = sum(bool(j.get("status", {}).get("progress", {}).get("globalStep"))
                             for j in get_json("distributedtrainings", "-n", ns)["items"])
        finally:
            watcher.stop()
            operator.stop()
            addresses.close()
    per_job_minute = 60 / window / JOBS

    def diff(after, before):
        return {k: after[k] - before.get(k, 0) for k in after}
    return {"contender": name, "jobs": JOBS, "window_s": window, "ready_s": round(ready, 1),
            "chief_ip_shared": duplicated, "jobs_with_progress": progressed,
            "cpu_s": round(cpu1 - cpu0, 2),
            "cpu_ms_per_job_minute": round(1000 * (cpu1 - cpu0) * per_job_minute, 2),
            "status_writes_per_job_minute": round(status_writes(diff(writes1, writes0)) * per_job_minute, 2),
            "readings_per_job_minute": round((readings1 - readings0) * per_job_minute, 2),
            "life_s": round(life, 1),
            "status_writes_per_job_life": round(status_writes(diff(writes_end, writes_start)) / JOBS, 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="folder of the release disttrain-operator")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--window", type=int, default=120)
    parser.add_argument("--only", default=",".join(CONTENDERS))
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("progress_bench: needs root (it routes kwok's pod addresses to this machine)")
    install_crd()
    binary = os.path.join(args.bin, "disttrain-operator")
    names = args.only.split(",")
    chiefs = FakeChiefs()
    results = {n: [] for n in names}
    try:
        for r in range(args.runs):  # interleaved: a drift of the machine hits every contender
            for n in names:
                result = run(n, binary, CONTENDERS[n], args.window, chiefs)
                result["run"] = r
                print(json.dumps(result), flush=True)
                results[n].append(result)
    finally:
        chiefs.close()
    keys = ["cpu_ms_per_job_minute", "status_writes_per_job_minute", "readings_per_job_minute",
            "status_writes_per_job_life", "life_s"]
    print(f"\nmedians of {args.runs} runs, {JOBS} jobs x 7 pods, {args.window} s window:\n")
    print("| contender | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for n in names:
        print(f"| {n} | " + " | ".join(str(statistics.median(r[k] for r in results[n])) for k in keys) + " |")


if __name__ == "__main__":
    main()
