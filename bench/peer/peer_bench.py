"""disttrain's operator side by side with Kubeflow's training-operator (the peer), one after the
other on the same local cluster (kwok nodes), with equivalent jobs: N jobs of 7 pods (chief, 2 PS,
3 workers, evaluator; the chief exits 0 after 15 s + i x 0.3 s), cleanPodPolicy Running for both.

Contenders, each run --runs times, interleaved:
  disttrain           our operator, release build, its defaults (6 workers, 4 requests in flight per
                      job and 16 in all, 400 QPS / 800 burst)
  disttrain-apf       our operator without a client-side limit (--kube-api-qps=0): the API
                      server's priority and fairness only (its measured effect)
  disttrain-tfjob     our operator with --tfjob running the same jobs as TFJobs (the peer's
                      manifests) under our TFJob CRD: the TFJob front's cost against the
                      DistributedTraining figures and against the peer on the same objects
  peer-defaults       training-operator at its defaults (1 thread, 20 QPS / 30 burst)
  peer-matched        training-operator with our threads and rate limits (6, 400/800)
  bare-client         the same Services and Pods created by a minimal parallel client with no
                      client-side limit (bench/peer/bare_client.cc): the API server's own limit,
                      simplified objects (no owner reference, a stub TF_CONFIG)
  bare-same           the same client creating exactly the objects our operator builds (its own
                      builders: labels, owner references to the jobs, created first with no
                      operator running, full TF_CONFIG)

Figures per run: seconds from apply until all pods exist, all Running, all jobs Succeeded; PS
teardown latency after the chief's exit (p50/p99); operator CPU seconds and peak RSS; RSS idle
with every job present. Prints one JSON line per run, then medians as a markdown table.

  python3 bench/peer/peer_bench.py --bin build/release/bin [--jobs 100] [--runs 3] [--write-docs]

Variants of our operator run as extra contenders, e.g. the A/B runs in docs/operations.md:
  --contender "http40=--http-client-threads=40" --contender "arenas16=MALLOC_ARENA_MAX=16"
    --only disttrain,http40,arenas16
An absolute path in FLAGS is the operator binary to run (e.g. a build of an earlier commit):
  --contender "before=/tmp/old/build/release/bin/disttrain-operator" --only disttrain,before
"""
import argparse
import functools
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PERF_HZ = 99  # perf record -F for --flamegraph (--perf-hz)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
from kube import KUBECONFIG, ROOT, Namespace, apply, get_json, kubectl, wait_until  # noqa: E402
from crd_test import install_crd  # noqa: E402
from peer_process import Peer  # noqa: E402
import flamegraph  # noqa: E402
import scale_report  # noqa: E402
from scale_harness import (PodWatcher, current_rss_mb, job_manifest, percentile, proc_usage,  # noqa: E402
                           server_cpu)

CHIEF_SECONDS, SPREAD_SECONDS = 15, 0.3


class BenchNamespace(Namespace):
    """A namespace that is gone, with everything in it, before the next run starts: the namespace
    controller deleting 1,400 objects would otherwise load the API server during the next
    contender's run. `wait` False (a --scale run with one contender): deleted without waiting
    (tens of thousands of objects take the namespace controller many minutes; a fresh cluster is
    quicker)."""
    wait = True

    def __exit__(self, *exc):
        if not self.wait:
            kubectl("delete", "namespace", self.name, "--wait=false", check=False)
            return
        kubectl("delete", "namespace", self.name, "--wait=true", "--timeout=900s", check=False, timeout=960)


def tfjob_manifest(name, chief_seconds):
    """The TFJob equivalent of scale_harness.job_manifest."""
    dtr = job_manifest(name, chief_seconds)
    specs = {role: {"replicas": spec["replicas"], "restartPolicy": "Never", "template": spec["template"]}
             for role, spec in dtr["spec"]["replicaSpecs"].items()}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": specs}}


class Ours:
    def __init__(self, binary, args, env=None):
        self.binary, self.args, self.env, self.proc = binary, args, env, None

    def start(self):
        if "--tfjob" in self.args:  # our CRD over the peer's (Peer.install puts the peer's back)
            kubectl("apply", "--server-side", "--force-conflicts", "-f",
                    os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml"))
        self.log = tempfile.NamedTemporaryFile("w+", prefix="disttrain-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([self.binary, "--kubeconfig", KUBECONFIG, "--metrics-bind-address",
                                      "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0", *self.args],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, **(self.env or {})))
        wait_until("the operator's caches", lambda: "caches synced" in open(self.log.name).read(), timeout=60)
        return self

    def metrics(self):
        port = re.search(r"metrics_port=(\d+)", open(self.log.name).read()).group(1)
        return subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/metrics"], capture_output=True,
                              text=True, timeout=10).stdout

    def requests(self):
        """{method: count} of the API requests made so far, and "reconciles": the reconcile passes,
        from the operator's own /metrics."""
        text = self.metrics()
        counts = {}
        for m in re.finditer(r'^rest_client_requests_total\{([^}]*)\} (\S+)$', text, re.M):
            labels, n = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))), int(float(m.group(2)))
            counts[labels["method"]] = counts.get(labels["method"], 0) + n
            if not labels["code"].startswith("2"):  # also apart: "POST 409", "DELETE 404"
                key = f'{labels["method"]} {labels["code"]}'
                counts[key] = counts.get(key, 0) + n
        # Reconcile passes (every result), for telling how many passes a change saves.
        counts["reconciles"] = sum(int(float(m.group(1))) for m in re.finditer(
            r'^controller_runtime_reconcile_total\{[^}]*\} (\S+)$', text, re.M))
        return counts

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class PeerOnItsCrd(Peer):
    """The peer under its own TFJob CRD (the disttrain-tfjob contender runs under ours)."""

    def start(self):
        Peer.install(self.folder)
        return super().start()


def succeeded_jobs(kind, ns):
    items = get_json(kind, "-n", ns)["items"]
    if kind == "tfjobs":
        return sum(any(c["type"] == "Succeeded" and c["status"] == "True" for c in j.get("status", {}).get(
            "conditions", [])) for j in items)
    return sum(j.get("status", {}).get("state") == "Succeeded" for j in items)


def single_chief_manifest(name, chief_seconds):
    """A 1-pod job: its chief alone, succeeding after `chief_seconds`."""
    job = job_manifest(name, chief_seconds)
    job["spec"]["replicaSpecs"] = {"Chief": job["spec"]["replicaSpecs"]["Chief"]}
    return job


WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def apiserver_writes():
    """{"VERB resource[/subresource][.group]": count} of the write requests kube-apiserver has
    served so far, from its own apiserver_request_total (every client's: the operators', the
    scheduler's, kwok's, the bench's)."""
    text = kubectl("get", "--raw", "/metrics", timeout=60).stdout
    counts = {}
    for m in re.finditer(r'^apiserver_request_total\{([^}]*)\} (\S+)$', text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("verb") not in WRITE_VERBS:
            continue
        key = labels["verb"] + " " + labels.get("resource", "") + \
            (f"/{labels['subresource']}" if labels.get("subresource") else "") + \
            (f".{labels['group']}" if labels.get("group") else "")
        counts[key] = counts.get(key, 0) + int(float(m.group(2)))
    return counts


def writes_between(before, after, jobs):
    """The writes of a run (after - before) and, per job, the job's own status writes and the
    core Events written (POST and PATCH of events with no group: the operators' events; the
    scheduler's go to events.k8s.io)."""
    diff = {k: after[k] - before.get(k, 0) for k in after if after[k] - before.get(k, 0)}
    status = sum(n for k, n in diff.items() if k.split(" ")[1].split(".")[0] in (
        "distributedtrainings/status", "tfjobs/status", "distributedtrainings", "tfjobs")
        and k.split(" ")[0] in ("PUT", "PATCH"))
    events = sum(n for k, n in diff.items() if k in ("POST events", "PATCH events"))
    return {"apiserver_writes": dict(sorted(diff.items())),
            "status_writes_per_job": round(status / jobs, 2), "events_per_job": round(events / jobs, 2)}


SUBMIT = "apply"  # --scale: "create" (one POST per job; apply GETs each object first)


def submit(items, ns):
    for chunk in range(0, len(items), 100):  # kubectl applies a List one object after another
        kubectl(SUBMIT, "-f", "-", "-n", ns, timeout=900,
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items[chunk:chunk + 100]}))


def run_operator(name, operator, kind, manifest, selector, jobs, timeout=900, profile=None, pods_per_job=7,
                 ps_per_job=2, spread=SPREAD_SECONDS, preload=False):
    with BenchNamespace("peer") as ns:
        items = [manifest(f"job-{i:03d}", CHIEF_SECONDS + i * spread) for i in range(jobs)]
        applied = None
        if preload:  # every job exists before the operator starts: its creation speed alone
            t = time.monotonic()
            submit(items, ns)
            applied = time.monotonic() - t
        operator.start()
        watcher = PodWatcher(ns, selector)
        perf = None
        if profile:  # sample the operator's stacks for the whole run (DWARF unwinding: no frame pointers)
            perf = subprocess.Popen(["perf", "record", "-q", "-F", str(PERF_HZ), "--call-graph", "dwarf,8192", "-p",
                                     str(operator.proc.pid), "-o", profile], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        try:
            pid = operator.proc.pid
            cpu0, _ = proc_usage(pid)
            server0 = server_cpu()
            writes0 = apiserver_writes()
            start = time.monotonic()
            if not preload:
                submit(items, ns)
                applied = time.monotonic() - start
            wait_until("every pod to exist", lambda: len(watcher.added) >= pods_per_job * jobs, timeout=timeout)
            # What the creation phase cost the API server and the operator (its CPU since its start,
            # as the bare client's covers its whole process), and which requests it made in it.
            server_created = server_cpu() - server0
            cpu_created, _ = proc_usage(pid)
            requests_created = operator.requests() if hasattr(operator, "requests") else None
            # With preloaded jobs, from the first pod to the last (as the bare client's time).
            created = max(watcher.added.values()) - (min(watcher.added.values()) if preload else start)
            # A pod deleted before it ever ran (a worker of a job whose chief finished while the
            # kubelet was still starting it) counts as settled.
            wait_until("every pod to run (or be deleted)", lambda: all(
                n in watcher.running or n in watcher.deleting for n in list(watcher.added)), timeout=timeout)
            running = max(watcher.running.values()) - start
            # Each poll lists every job: at thousands of jobs, a poll every few seconds.
            wait_until(f"all {jobs} jobs to succeed", lambda: succeeded_jobs(kind, ns) == jobs, timeout=timeout,
                       interval=max(0.2, jobs / 2000))
            succeeded = time.monotonic() - start
            wait_until("every parameter server to be deleted", lambda: all(
                f"job-{i:03d}-ps-{k}" in watcher.deleting for i in range(jobs) for k in range(ps_per_job)),
                timeout=timeout)
            cpu1, peak = proc_usage(pid)
            server1 = server_cpu()
            writes = writes_between(writes0, apiserver_writes(), jobs)
            requests = operator.requests() if hasattr(operator, "requests") else None
            if requests:  # the operator's own count (kwok's and the scheduler's writes are not its)
                writes["writes_per_job"] = round(sum(requests.get(v, 0) for v in WRITE_VERBS) / jobs, 2)
            time.sleep(10)  # idle: every job present, nothing to do
            idle = current_rss_mb(pid)
            latencies = [(watcher.deleting[f"job-{i:03d}-ps-{k}"] - watcher.succeeded[f"job-{i:03d}-chief-0"]) * 1000
                         for i in range(jobs) for k in range(ps_per_job)]
        finally:
            if perf:
                perf.send_signal(2)
                perf.wait(timeout=120)
            watcher.stop()
            operator.stop()
    return {"contender": name, "jobs": jobs, "pods": pods_per_job * jobs, "preloaded": preload,
            "jobs_applied_s": round(applied, 2), "all_pods_exist_s": round(created, 2),
            "apiserver_cpu_s": round(server1 - server0, 2), "apiserver_cpu_creating_s": round(server_created, 2),
            "all_running_s": round(running, 2), "never_ran": len(set(watcher.added) - set(watcher.running)), "all_succeeded_s": round(succeeded, 2),
            "ps_teardown_ms_p50": round(percentile(latencies, 50), 1) if latencies else None,
            "ps_teardown_ms_p99": round(percentile(latencies, 99), 1) if latencies else None,
            "cpu_s": round(cpu1 - cpu0, 2), "cpu_creating_s": round(cpu_created, 2), "peak_rss_mb": round(peak, 1), "idle_rss_mb": round(idle, 1),
            **writes,
            **({"api_requests": requests} if requests is not None else {}),
            **({"api_requests_creating": requests_created} if requests_created is not None else {})}


def run_bare(bare_client, jobs, threads=16, same=False, spread=SPREAD_SECONDS):
    """`same`: the jobs are created first (no operator runs) and the client creates exactly the
    objects our operator builds for them (its own builders); otherwise simplified objects.
    The same pod watcher as the operators' runs observes the creation (it costs the API server a
    JSON watch and this machine its parsing), and "pods exist" is measured as for them: from the
    first pod the watcher saw to the last. The client's own time is kept as client_s."""
    with BenchNamespace("bare") as ns:
        args = ["--jobs", str(jobs)]
        selector = "bench.disttrain.io/job"
        if same:
            submit([job_manifest(f"job-{i:03d}", CHIEF_SECONDS + i * spread) for i in range(jobs)], ns)
            args, selector = ["--from-jobs"], "app.kubernetes.io/managed-by=disttrain-operator"
        watcher = PodWatcher(ns, selector)
        try:
            server0 = server_cpu()
            children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run([bare_client, "--kubeconfig", KUBECONFIG, "--namespace", ns, *args,
                                  "--threads", str(threads)], capture_output=True, text=True, timeout=3600)
            children1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            client_cpu = (children1.ru_utime + children1.ru_stime) - (children0.ru_utime + children0.ru_stime)
            if out.returncode != 0:
                raise AssertionError(f"bare_client failed: {out.stderr[-2000:]}")
            r = json.loads(out.stdout)
            wait_until("the watcher to see every pod", lambda: len(watcher.added) >= r["objects"] // 2, timeout=120)
            server1 = server_cpu()
            created = max(watcher.added.values()) - min(watcher.added.values())
        finally:
            watcher.stop()
    return {"contender": "bare-same" if same else "bare-client", "jobs": jobs, "all_pods_exist_s": round(created, 2),
            "client_s": round(r["seconds"], 2), "cpu_s": round(client_cpu, 2),
            "apiserver_cpu_creating_s": round(server1 - server0, 2),
            "objects": r["objects"], "threads": threads}


COLUMNS = [("jobs_applied_s", "jobs applied (s)"), ("all_pods_exist_s", "pods exist (s)"), ("all_running_s", "all Running (s)"),
           ("all_succeeded_s", "all Succeeded (s)"), ("ps_teardown_ms_p50", "PS teardown p50 (ms)"),
           ("ps_teardown_ms_p99", "PS teardown p99 (ms)"), ("cpu_s", "CPU (s)"), ("cpu_creating_s", "CPU until every pod exists (s)"), ("apiserver_cpu_s", "API server + etcd CPU (s)"), ("peak_rss_mb", "peak RSS (MB)"),
           ("idle_rss_mb", "idle RSS (MB)")]


def table(results, jobs, runs):
    by = {}
    for r in results:
        by.setdefault(r["contender"], []).append(r)
    med = {name: {k: statistics.median(r[k] for r in rs) for k, _ in COLUMNS if k in rs[0]} for name, rs in by.items()}
    preloaded = any(r.get("preloaded") for r in results)
    lines = [f"| {jobs} jobs x 7 pods{' (preloaded)' if preloaded else ''}, medians of {runs} | " + " | ".join(t for _, t in COLUMNS) + " |",
             "|---" * (len(COLUMNS) + 1) + "|"]
    for name, m in med.items():
        lines.append(f"| {name} | " + " | ".join(f"{m[k]:g}" if k in m else "-" for k, _ in COLUMNS) + " |")
    # The baseline: the bare client creating our operator's own objects, else simplified ones.
    base_name = "bare-same" if "bare-same" in med else "bare-client"
    ours, bare = med.get("disttrain"), med.get(base_name)
    notes = []
    if ours and bare:
        notes.append(f"disttrain creates every pod in {ours['all_pods_exist_s'] / bare['all_pods_exist_s']:.2f}x "
                     f"the bare client's time ({base_name})")
        if "cpu_creating_s" in ours and bare.get("cpu_s"):
            notes.append(f"disttrain's CPU from its start to every pod existing: "
                         f"{ours['cpu_creating_s'] / bare['cpu_s']:.2f}x the bare client's own CPU ({base_name})")
    if med.get("disttrain-apf") and bare:
        notes.append(f"disttrain-apf (no client-side limit) creates every pod in "
                     f"{med['disttrain-apf']['all_pods_exist_s'] / bare['all_pods_exist_s']:.2f}x the bare client's time")
    tf = med.get("disttrain-tfjob")
    if ours and tf:
        notes.append(f"disttrain-tfjob against disttrain: pods exist {tf['all_pods_exist_s'] / ours['all_pods_exist_s']:.2f}x, "
                     f"PS teardown p99 {tf['ps_teardown_ms_p99'] / ours['ps_teardown_ms_p99']:.2f}x, CPU "
                     f"{tf['cpu_s'] / ours['cpu_s']:.2f}x, peak RSS {tf['peak_rss_mb'] / ours['peak_rss_mb']:.2f}x")
    def against(mine, p):
        return (f"CPU {mine['cpu_s'] / p['cpu_s']:.2f}x, peak RSS {mine['peak_rss_mb'] / p['peak_rss_mb']:.2f}x, "
                f"PS teardown p99 {mine['ps_teardown_ms_p99'] / p['ps_teardown_ms_p99']:.3f}x, pods exist "
                f"{mine['all_pods_exist_s'] / p['all_pods_exist_s']:.2f}x")
    for peer in ("peer-matched", "peer-defaults"):
        if tf and peer in med:
            notes.append(f"disttrain-tfjob against {peer} (the same TFJobs): {against(tf, med[peer])}")
    for peer in ("peer-matched", "peer-defaults"):
        if ours and peer in med:
            notes.append(f"against {peer}: {against(ours, med[peer])}")
    return "\n".join(lines) + "\n\n" + "".join(f"- {n}\n" for n in notes)


def scale(a, folder, matched):
    """--scale: one run of each shape; with --scale-with, the bare client (bare-same) and the peer
    on the same 7-pod jobs in the same invocation, for the ratios the issue asks for."""
    global SUBMIT
    SUBMIT = "create"
    BenchNamespace.wait = bool(a.scale_with)
    if a.scale_nodes:  # room for the pods that run at once (100m CPU each, 64 CPUs a node)
        subprocess.run([os.path.join(ROOT, "tests", "cluster", "add-nodes.sh")], check=True,
                       env=dict(os.environ, DISTTRAIN_NODES=str(a.scale_nodes)))
    binary = os.path.join(a.bin, "disttrain-operator")
    ours = "app.kubernetes.io/managed-by=disttrain-operator"
    jobs7 = a.scale_jobs
    spread7 = min(0.3, 300 / jobs7)  # the last chief exits ~5 minutes after its start
    rows = []
    for label, manifest, jobs, pods, ps, spread in [(f"{jobs7:,} jobs x 7 pods", job_manifest, jobs7, 7, 2, spread7),
                                                    ("5,000 single-chief jobs", single_chief_manifest, 5000, 1, 0,
                                                     0.06)]:
        if str(pods) not in a.scale.split(","):
            continue
        r = run_operator("disttrain", Ours(binary, []), "dtr", manifest, ours, jobs, timeout=4 * 3600,
                         pods_per_job=pods, ps_per_job=ps, spread=spread)
        r["scale"] = label
        r["cpu_ms_per_job"] = round(1000 * r["cpu_s"] / jobs, 2)
        r["apiserver_cpu_ms_per_job"] = round(1000 * r["apiserver_cpu_s"] / jobs, 2)
        r["peak_rss_mb_per_1000_jobs"] = round(r["peak_rss_mb"] * 1000 / jobs, 2)
        r["peak_rss_mb_per_1000_pods"] = round(r["peak_rss_mb"] * 1000 / r["pods"], 1)
        print(json.dumps(r), flush=True)
        rows.append(r)
        if pods != 7:
            continue
        for other in a.scale_with.split(","):
            if other == "bare-same":
                b = run_bare(os.path.join(a.bin, "bare_client"), jobs, same=True, spread=spread)
            elif other == "peer":
                n = a.scale_peer_jobs or jobs
                b = run_operator("peer-matched", PeerOnItsCrd(folder, matched), "tfjobs", tfjob_manifest,
                                 "training.kubeflow.org/job-name", n, timeout=4 * 3600,
                                 spread=min(0.3, 300 / n))
                b["cpu_ms_per_job"] = round(1000 * b["cpu_s"] / n, 2)
                b["apiserver_cpu_ms_per_job"] = round(1000 * b["apiserver_cpu_s"] / n, 2)
            else:
                continue
            b["scale"] = label
            print(json.dumps(b), flush=True)
            rows.append(b)
    print(scale_report.text(rows, f"{jobs7:,} jobs x 7 pods"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "bin"))
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="disttrain,peer-defaults,peer-matched,bare-same,bare-client")
    ap.add_argument("--contender", action="append", default=[], metavar="NAME=FLAGS",
                    help="another run of our operator with these flags and environment variables (e.g. "
                    "'w16=--workers=16 MALLOC_ARENA_MAX=1'; an absolute path is the binary to run); add NAME "
                    "to --only to run it")
    ap.add_argument("--preload", action="store_true", help="create every job before the operator starts and "
                    "time pod creation from the first pod to the last, as the bare client's (kubectl's own apply "
                    "of 100 jobs takes seconds)")
    ap.add_argument("--write-docs", action="store_true", help="replace the table in docs/operations.md")
    ap.add_argument("--scale", nargs="?", const="7,1", metavar="SHAPES",
                    help="--scale-jobs jobs x 7 pods (shape 7; default 1,000) and 5,000 single-chief jobs (shape "
                    "1), one run each of ours, or only the shapes listed (--scale 1); jobs are submitted with "
                    "kubectl create; prints JSON lines and a table")
    ap.add_argument("--scale-jobs", type=int, default=1000, help="--scale: jobs of the 7-pod shape")
    ap.add_argument("--scale-nodes", type=int, default=0, help="--scale: register this many simulated nodes "
                    "first (tests/cluster/add-nodes.sh; 4 after make cluster-up)")
    ap.add_argument("--scale-with", default="", help="--scale: also bare-same and/or peer on the 7-pod jobs "
                    "(comma-separated)")
    ap.add_argument("--scale-peer-jobs", type=int, default=0, help="--scale-with peer: its jobs (default "
                    "--scale-jobs)")
    ap.add_argument("--perf-hz", type=int, default=99, help="perf's sampling rate for --flamegraph")
    ap.add_argument("--flamegraph", metavar="SVG", help="profile our operator's first run with perf and write a "
                    "flame graph (bench/peer/flamegraph.py) and, beside it, a .txt of the hottest objects and functions")
    a = ap.parse_args()
    folder = subprocess.run([os.path.join(HERE, "build-peer.sh")], capture_output=True, text=True,
                            check=True).stdout.strip()
    install_crd()
    # A namespace still being deleted may hold another test's operator (a Deployment on the real
    # node), which reconciles every namespace until its pod is gone: it would race ours.
    wait_until("namespaces being deleted to be gone", lambda: "Terminating" not in kubectl(
        "get", "namespaces", "-o", "jsonpath={.items[*].status.phase}").stdout, timeout=300)
    # Our operator caches every DistributedTraining in the cluster: jobs left by another run would
    # cost it memory and passes the peer (which watches TFJobs) does not pay.
    leftover = len(get_json("distributedtrainings", "-A")["items"])
    if leftover:
        sys.exit(f"{leftover} DistributedTrainings already exist in the cluster; delete them first "
                 "(kubectl delete distributedtrainings -A --all) so both operators start alike")
    Peer.install(folder)
    matched = ["--controller-threads=6", "--kube-api-qps=400", "--kube-api-burst=800"]  # our --workers, QPS, burst
    profile = tempfile.mktemp(prefix="disttrain-perf-", suffix=".data") if a.flamegraph else None
    global PERF_HZ
    PERF_HZ = a.perf_hz
    ours = "app.kubernetes.io/managed-by=disttrain-operator"
    run = functools.partial(run_operator, preload=a.preload)
    contenders = {
        "disttrain": lambda: run("disttrain", Ours(os.path.join(a.bin, "disttrain-operator"), []),
                                          "dtr", job_manifest, ours, a.jobs, profile=profile),
        "disttrain-apf": lambda: run(
            "disttrain-apf", Ours(os.path.join(a.bin, "disttrain-operator"), ["--kube-api-qps=0"]), "dtr",
            job_manifest, ours, a.jobs),
        "disttrain-tfjob": lambda: run(
            "disttrain-tfjob", Ours(os.path.join(a.bin, "disttrain-operator"), ["--tfjob"]), "tfjobs",
            tfjob_manifest, "training.kubeflow.org/job-name", a.jobs),
        "peer-defaults": lambda: run("peer-defaults", PeerOnItsCrd(folder, []), "tfjobs", tfjob_manifest,
                                              "training.kubeflow.org/job-name", a.jobs),
        "peer-matched": lambda: run("peer-matched", PeerOnItsCrd(folder, matched), "tfjobs", tfjob_manifest,
                                             "training.kubeflow.org/job-name", a.jobs),
        "bare-client": lambda: run_bare(os.path.join(a.bin, "bare_client"), a.jobs),
        "bare-same": lambda: run_bare(os.path.join(a.bin, "bare_client"), a.jobs, same=True),
    }
    for spec in a.contender:
        name, _, flags = spec.partition("=")
        args = [t for t in flags.split() if t.startswith("-")]
        paths = [t for t in flags.split() if t.startswith("/")]
        env = dict(t.split("=", 1) for t in flags.split() if not t.startswith(("-", "/")))
        binary = paths[0] if paths else os.path.join(a.bin, "disttrain-operator")
        contenders[name] = (lambda name=name, args=args, env=env, binary=binary: run(
            name, Ours(binary, args, env), "dtr", job_manifest, ours, a.jobs))
    if a.scale:
        scale(a, folder, matched)
        return
    results = []
    for _ in range(a.runs):
        for name in a.only.split(","):
            r = contenders[name]()
            print(json.dumps(r), flush=True)
            results.append(r)
            if profile and name == "disttrain":
                script = subprocess.run(["perf", "script", "-i", profile], capture_output=True, text=True).stdout
                flamegraph.write(script.splitlines(), a.flamegraph,
                                 f"disttrain-operator, {a.jobs} jobs x 7 pods (make bench-peer, perf -F {PERF_HZ})")
                kept = os.path.join(tempfile.gettempdir(), "disttrain-operator.perf.data")
                os.replace(profile, kept)  # for perf report
                print(f"perf data kept in {kept}", file=sys.stderr)
                profile = None
    text = table(results, a.jobs, a.runs)
    print(text)
    if a.write_docs:
        path = os.path.join(ROOT, "docs", "operations.md")
        doc = open(path).read()
        begin, end = "<!-- bench-peer:begin -->\n", "<!-- bench-peer:end -->\n"
        if begin in doc:
            doc = doc[:doc.index(begin) + len(begin)] + text + doc[doc.index(end):]
            open(path, "w").write(doc)


if __name__ == "__main__":
    main()
