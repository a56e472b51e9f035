"""Operator scale benchmark on the local cluster: N jobs of 7 pods (chief, 2 PS, 3 workers,
evaluator) applied at once, each chief finishing after a few seconds.

Measures, from one watch of every pod the operator manages:
- the time to create all pods of all jobs (from the apply to the last pod's ADDED event);
- the parameter-server teardown latency per job: from the watch event that shows the chief
  Succeeded to the event that shows each of its PS pods marked for deletion (p50/p99);
- the operator's CPU seconds and peak RSS for the run.
Prints one JSON line. Usable as a library (run_scale) by the e2e suite.
"""
import base64
import http.client
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from kube import CLUSTER_DIR, KUBECONFIG, TOOLS, Namespace, get_json, kubectl, wait_until
from crd_test import install_crd
from operator_process import OperatorProcess


def job_manifest(name, chief_seconds):
    """A 7-pod job whose simulated chief succeeds after `chief_seconds`."""
    def role(n, annotations=None):
        return {"replicas": n, "template": {"metadata": {"annotations": annotations or {}},
                "spec": {"containers": [{"name": "tensorflow", "image": "registry.example/trainer:1",
                                         "resources": {"requests": {"cpu": "100m"}}}]}}}
    return {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": name},
            "spec": {"replicaSpecs": {
                "Chief": role(1, {"test.disttrain.io/exit-code": "0",
                                  "test.disttrain.io/run-seconds": f"{chief_seconds:.1f}"}),
                "PS": role(2), "Worker": role(3), "Evaluator": role(1)}}}


def api_connection():
    """(host, port, ssl context) of the cluster in KUBECONFIG, with its client credentials."""
    cfg = json.loads(kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    cluster, user = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]
    folder = tempfile.mkdtemp(prefix="disttrain-watch-")

    def path(key):  # a file path, or inline base64 data written to a file
        if key in cluster or key in user:
            return (cluster | user)[key]
        data = (cluster | user).get(key + "-data")
        if data is None:
            return None
        out = os.path.join(folder, key)
        with open(out, "wb") as f:
            f.write(base64.b64decode(data))
        return out

    ctx = ssl.create_default_context(cafile=path("certificate-authority"))
    ctx.load_cert_chain(path("client-certificate"), path("client-key"))
    url = urllib.parse.urlparse(cluster["server"])
    return url.hostname, url.port or 443, ctx


class PodWatcher:
    """Records when this process saw each pod event: one watch of the API (one clock), resumed from
    the last resourceVersion it saw whenever the server ends it, so no event is lost; a watch too
    old to resume (410 Gone) lists the pods again and counts the ones gone as deleted then."""

    def __init__(self, namespace, selector="app.kubernetes.io/managed-by=disttrain-operator",
                 collection="/api/v1/namespaces/{ns}/pods"):
        self.path = f"{collection.format(ns=namespace)}?labelSelector={urllib.parse.quote(selector)}"
        self.host, self.port, self.ctx = api_connection()
        self.added, self.running, self.succeeded, self.deleting, self.deleted = {}, {}, {}, {}, {}
        self.restarts = 0
        self.stopping = False
        self.conn = None
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def request(self, query, timeout):
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        self.conn.request("GET", self.path + query)
        resp = self.conn.getresponse()
        if resp.status != 200:
            raise OSError(f"GET {self.path}{query}: HTTP {resp.status}")
        return resp

    def relist(self):
        body = json.load(self.request("", 120))
        now = time.monotonic()
        present = set()
        for pod in body["items"]:
            present.add(pod["metadata"]["name"])
            self.observe("ADDED", pod, now)
        for name in list(self.added):  # gone while no watch was open: deleted by now
            if name not in present:
                self.deleting.setdefault(name, now)
        return body["metadata"]["resourceVersion"]

    def observe(self, kind, pod, now):
        name, phase = pod["metadata"]["name"], pod.get("status", {}).get("phase", "")
        if kind == "ADDED":
            self.added.setdefault(name, now)
        if phase == "Running":
            self.running.setdefault(name, now)
        if phase == "Succeeded":
            self.succeeded.setdefault(name, now)
        if pod["metadata"].get("deletionTimestamp") or kind == "DELETED":
            self.deleting.setdefault(name, now)
        if kind == "DELETED":
            self.deleted[name] = now

    def read(self):
        rv = None
        while not self.stopping:
            try:
                if rv is None:
                    rv = self.relist()
                resp = self.request(f"&watch=1&allowWatchBookmarks=true&timeoutSeconds=240&resourceVersion={rv}", 330)
                for line in resp:
                    now = time.monotonic()
                    event = json.loads(line)
                    if event["type"] == "ERROR":  # 410 Gone: too old to resume
                        rv = None
                        break
                    rv = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        self.observe(event["type"], event["object"], now)
            except (OSError, ValueError, http.client.HTTPException) as e:
                if self.stopping:
                    return
                print(f"pod watch failed ({e}); watching again", file=sys.stderr)
                time.sleep(0.5)
            self.restarts += 1

    def stop(self):
        self.stopping = True
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):
            pass
        self.thread.join(timeout=10)


def current_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int([l for l in f if l.startswith("VmRSS:")][0].split()[1]) / 1024


def proc_usage(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    with open(f"/proc/{pid}/status") as f:
        hwm = [l for l in f if l.startswith("VmHWM:")][0].split()[1]
    return cpu, int(hwm) / 1024


def server_cpu():
    """CPU seconds kube-apiserver and etcd of this lane's control plane (tests/cluster/lib.sh)
    have used so far: the load a client puts on them. Other lanes' run beside it."""
    pids = subprocess.run(["pgrep", "-x", "kube-apiserver|etcd"], capture_output=True, text=True).stdout.split()
    mine = []
    for p in pids:
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if (CLUSTER_DIR + "/kwok/").encode() in f.read():
                    mine.append(int(p))
        except OSError:
            pass
    return sum(proc_usage(p)[0] for p in mine)


def percentile(values, q):
    values = sorted(values)
    k = max(0, min(len(values) - 1, int(round(q / 100 * (len(values) - 1)))))
    return values[k]


def run_scale(jobs=100, chief_seconds=15, spread_seconds=0.3, timeout=300):
    """Chiefs finish `chief_seconds` + i * `spread_seconds` after they start, as real jobs do."""
    install_crd()
    with Namespace("scale") as ns:
        operator = OperatorProcess("scale", "--workers", "8").start()
        watcher = PodWatcher(ns)
        try:
            cpu0, _ = proc_usage(operator.proc.pid)
            start = time.monotonic()
            items = [job_manifest(f"job-{i:03d}", chief_seconds + i * spread_seconds) for i in range(jobs)]
            # kubectl applies a List one object after another, slower while the operator loads the
            # API server (25 s for 100 jobs on 2 cores): its own time is not what this measures.
            kubectl("apply", "-f", "-", "-n", ns, timeout=600,
                    input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            wait_until("every pod to be created", lambda: len(watcher.added) >= 7 * jobs, timeout=timeout)
            created_s = max(watcher.added.values()) - start

            def all_succeeded():
                states = [j.get("status", {}).get("state") for j in get_json("dtr", "-n", ns)["items"]]
                return states.count("Succeeded") == jobs
            wait_until(f"all {jobs} jobs to succeed", all_succeeded, timeout=timeout)
            wait_until("every parameter server to be deleted", lambda: all(
                f"job-{i:03d}-ps-{k}" in watcher.deleting for i in range(jobs) for k in range(2)),
                timeout=60)
            total_s = time.monotonic() - start
            cpu1, rss_mb = proc_usage(operator.proc.pid)
            latencies = []
            for i in range(jobs):
                chief = watcher.succeeded[f"job-{i:03d}-chief-0"]
                for k in range(2):
                    latencies.append((watcher.deleting[f"job-{i:03d}-ps-{k}"] - chief) * 1000)
            remaining_ps = get_json("pods", "-n", ns, "-l", "disttrain.io/replica-type=ps")["items"]
        finally:
            watcher.stop()
            code = operator.stop()
    return {
        "jobs": jobs, "pods": 7 * jobs,
        "create_all_pods_s": round(created_s, 2),
        "all_succeeded_s": round(total_s, 2),
        "ps_teardown_ms_p50": round(percentile(latencies, 50), 1),
        "ps_teardown_ms_p99": round(percentile(latencies, 99), 1),
        "ps_teardown_samples": len(latencies),
        "ps_pods_left": len([p for p in remaining_ps if not p["metadata"].get("deletionTimestamp")]),
        "operator_cpu_s": round(cpu1 - cpu0, 2),
        "operator_peak_rss_mb": round(rss_mb, 1),
        "operator_exit_code": code,
    }

