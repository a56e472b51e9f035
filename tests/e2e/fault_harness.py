"""Fault injection between the operator and the API server, on the local cluster.

toxiproxy (built by tests/cluster/tools/build-tools.sh) sits between the operator and the API
server; the operator's kubeconfig points at the proxy. 100 jobs run (4 pods each: chief, PS, two
workers, on kwok nodes) while the harness injects, one after the other: latency spikes,
connection resets, black-holed connections (no more bytes, no close), a stall of every stream
for longer than a watch lasts, an API-server restart with etcd compacted (the informers' next
watch gets 410 Gone), and five SIGKILLs of the operator at random moments (it is started again
at once, as a Deployment would).

The jobs (chief, PS and two workers; one worker for backoff jobs) and what they must end as:
- ok:      the chief exits 0 after 30-150 s                    -> Succeeded
- fail:    the chief exits 1 (restartPolicy ExitCode)           -> Failed, reason ChiefFailed
- backoff: its one worker exits 137 10 s after each start,      -> Failed, BackoffLimitExceeded,
           backoffLimit 2                                          after exactly 3 pods of that
                                                                   name (2 recreations)

Checked from outside the operator: a watch of every pod straight on the API server (not
through the proxy) records each pod's UID, so a pod name recreated without cause (a
duplicate) shows as an extra UID; no parameter server may be left once every job is final.
Requests: the sum over the operator processes of rest_client_requests_total, scraped before
each kill (the few requests between a scrape and its kill are not counted).

Prints one JSON line; usable as a library (run_faults) by tests/e2e/faults_test.py.
"""
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from kube import KUBECONFIG, ROOT, TOOLS, Namespace, apply, ensure_tool, get_json, kubectl, wait_until
from crd_test import install_crd
from operator_process import LOG_DIR, OperatorProcess

BACKOFF_LIMIT = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Toxiproxy:
    """A toxiproxy server and one proxy in front of the API server."""

    def __init__(self, upstream):
        self.api = f"http://127.0.0.1:{free_port()}"
        self.log = open(os.path.join(LOG_DIR, "toxiproxy.log"), "a")
        ensure_tool("toxiproxy")
        self.proc = subprocess.Popen([os.path.join(TOOLS, "toxiproxy-server"), "-host", "127.0.0.1",
                                      "-port", self.api.rsplit(":", 1)[1]], stdout=self.log, stderr=subprocess.STDOUT)
        wait_until("toxiproxy to serve", lambda: self._ok("GET", "/version"), timeout=20)
        self.listen = f"127.0.0.1:{free_port()}"
        self.call("POST", "/proxies", {"name": "apiserver", "listen": self.listen, "upstream": upstream,
                                       "enabled": True})
        self.injected = []

    def _ok(self, method, path):
        try:
            self.call(method, path)
            return True
        except OSError:
            return False

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read().decode()
        try:
            return json.loads(text)
        except ValueError:
            return text  # /version answers in plain text

    def add(self, name, kind, attributes, toxicity=1.0, stream="downstream"):
        self.call("POST", "/proxies/apiserver/toxics", {"name": name, "type": kind, "stream": stream,
                                                        "toxicity": toxicity, "attributes": attributes})
        self.injected.append(name)

    def remove(self, name):
        self.call("DELETE", f"/proxies/apiserver/toxics/{name}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.log.close()


def admin_config():
    return json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)


def proxied_kubeconfig(listen):
    """The admin kubeconfig with its server replaced by the proxy (same certificates)."""
    config = admin_config()
    for c in config["clusters"]:
        c["cluster"]["server"] = f"https://{listen}"
    path = os.path.join(LOG_DIR, "faults-kubeconfig")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


class UidWatcher:
    """Every pod name of the namespace and the UIDs it has had, from a watch on the API server."""

    def __init__(self, namespace):
        tmpl = '{.object.metadata.name} {.object.metadata.uid}{"\\n"}'
        self.cmd = [os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "pods", "-n", namespace,
                    "-w", "--output-watch-events", "-o", f"jsonpath={tmpl}"]
        self.uids = {}
        self.lock = threading.Lock()
        self.stopping = False
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while not self.stopping:
            for line in self.proc.stdout:
                parts = line.split()
                if len(parts) == 2:
                    with self.lock:
                        self.uids.setdefault(parts[0], set()).add(parts[1])
            if not self.stopping:  # the API server restarted: watch again (its list reports every pod)
                time.sleep(0.5)
                self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                             text=True)

    def snapshot(self):
        with self.lock:
            return {k: set(v) for k, v in self.uids.items()}

    def stop(self):
        self.stopping = True
        self.proc.terminate()


def role(n, policy, annotations=None):
    return {"replicas": n, "restartPolicy": policy,
            "template": {"metadata": {"annotations": annotations or {}},
                         "spec": {"containers": [{"name": "tensorflow", "image": "registry.example/trainer:1",
                                                  "resources": {"requests": {"cpu": "10m"}}}]}}}


def job_manifests(n, rng):
    """(name, kind, manifest) for n jobs: 60% ok, 20% fail, 20% backoff."""
    out = []
    for i in range(n):
        kind = "ok" if i % 5 < 3 else ("fail" if i % 5 == 3 else "backoff")
        chief, worker = {}, {}
        if kind == "ok":
            chief = {"test.disttrain.io/exit-code": "0", "test.disttrain.io/run-seconds": f"{rng.uniform(30, 150):.0f}"}
        elif kind == "fail":
            chief = {"test.disttrain.io/exit-code": "1", "test.disttrain.io/run-seconds": f"{rng.uniform(20, 120):.0f}"}
        else:
            worker = {"test.disttrain.io/exit-code": "137", "test.disttrain.io/run-seconds": "10"}
        name = f"{kind}-{i:03d}"
        spec = {"runPolicy": {"backoffLimit": BACKOFF_LIMIT},
                "replicaSpecs": {"Chief": role(1, "ExitCode", chief), "PS": role(1, "ExitCode"),
                                 "Worker": role(1, "ExitCode", worker) if worker else role(2, "ExitCode")}}
        out.append((name, kind, {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
                                 "metadata": {"name": name}, "spec": spec}))
    return out


def scrape_requests(operator, totals):
    """Adds the process's rest_client_requests_total to `totals` ({(code, method): n})."""
    try:
        text = operator.metrics()
    except OSError:
        return
    for m in re.finditer(r'^rest_client_requests_total\{code="([^"]*)",method="([^"]*)"\} (\S+)$', text, re.M):
        key = (m.group(1), m.group(2))
        totals[key] = totals.get(key, 0) + float(m.group(3))


def run_faults(jobs=100, seed=None, timeout=600, operator_args=()):
    seed = seed if seed is not None else int(time.time())
    rng = random.Random(seed)
    install_crd()
    # A namespace an earlier suite is still deleting must be gone before the API server restarts
    # below: seen once, the namespace controller finished such a deletion right after a restart
    # and left its 100 DistributedTrainings behind, in a namespace that no longer existed.
    wait_until("namespaces being deleted to be gone", lambda: "Terminating" not in kubectl(
        "get", "namespaces", "-o", "jsonpath={.items[*].status.phase}").stdout, timeout=300)
    os.makedirs(LOG_DIR, exist_ok=True)
    upstream = admin_config()["clusters"][0]["cluster"]["server"]
    proxy = Toxiproxy(upstream.removeprefix("https://"))
    kubeconfig = proxied_kubeconfig(proxy.listen)
    requests = {}
    timeline = []
    kills = 0
    start = time.monotonic()

    def note(what):
        timeline.append((round(time.monotonic() - start, 1), what))
        print(f"faults: t={timeline[-1][0]:6.1f}s {what}", file=sys.stderr, flush=True)

    with Namespace("faults") as ns:
        watcher = UidWatcher(ns)
        operator = OperatorProcess("faults", "--workers", "4", *operator_args, kubeconfig=kubeconfig).start()
        specs = job_manifests(jobs, rng)
        try:
            # 100 creates, each a GET and a POST from kubectl: past 60 s beside the other lanes twice.
            apply({"apiVersion": "v1", "kind": "List", "items": [m for _, _, m in specs]}, ns, timeout=300)
            note(f"applied {jobs} jobs")

            def kill_and_restart():
                nonlocal operator, kills
                time.sleep(rng.uniform(0, 8))  # a random point of the current phase
                scrape_requests(operator, requests)
                operator.kill()
                operator.proc.wait()
                kills += 1
                note(f"SIGKILL {kills} of the operator; started again")
                operator = OperatorProcess("faults", "--workers", "4", *operator_args,
                                           kubeconfig=kubeconfig).start(wait_ready=False)

            def toxic(name, kind, attributes, seconds, toxicity=1.0, stream="downstream"):
                proxy.add(name, kind, attributes, toxicity, stream)
                note(f"toxic {name}: {kind} {attributes} toxicity {toxicity} for {seconds} s")
                time.sleep(seconds)
                proxy.remove(name)

            time.sleep(5)
            toxic("latency", "latency", {"latency": 1500, "jitter": 1000}, 15)
            kill_and_restart()
            toxic("resets", "reset_peer", {"timeout": 3000}, 20, toxicity=0.5)
            kill_and_restart()
            toxic("blackhole", "timeout", {"timeout": 0}, 25, toxicity=0.3)
            # Longer than a watch lasts (20-30 s): every stream stalls, the idle limit must end them.
            toxic("stall", "timeout", {"timeout": 0}, 40, toxicity=1.0)
            kill_and_restart()
            subprocess.run([os.path.join(ROOT, "tests/cluster/restart-apiserver.sh"), "--compact"], check=True,
                           capture_output=True)
            note("API server restarted with etcd compacted (410 Gone for the old watches)")
            kill_and_restart()
            toxic("latency2", "latency", {"latency": 800, "jitter": 800}, 10)
            kill_and_restart()
            faults_end = time.monotonic()
            note("faults over")

            pending = []  # the jobs not final at the last look, for the timeout's message

            def all_final():
                items = get_json("dtr", "-n", ns)["items"]
                done = [j for j in items if j.get("status", {}).get("state") in ("Succeeded", "Failed")]
                pending[:] = [(j["metadata"]["name"], j.get("status", {}).get("state")) for j in items
                              if j not in done]
                return len(done) == jobs and items
            try:
                items = wait_until(f"all {jobs} jobs to be Succeeded or Failed", all_final, timeout=timeout)
            except AssertionError as e:
                # What a stuck job had, for the next reader of a CI log: its conditions and its pods,
                # compact and first (a CI summary shows 240 characters of a failure's first line).
                detail, short = [], []
                for name, state in pending[:3]:
                    job = get_json("dtr", name, "-n", ns)
                    st = job.get("status", {})
                    conditions = [(c["type"], c["status"], c.get("reason"), c.get("message", "")[:120])
                                  for c in st.get("conditions", [])]
                    pods = [(p["metadata"]["name"], p["status"].get("phase"),
                             bool(p["metadata"].get("deletionTimestamp")), p["metadata"]["uid"][:8])
                            for p in get_json("pods", "-n", ns, "-l", f"disttrain.io/job-name={name}")["items"]]
                    replacing = [u[:8] for u in st.get("restartingPods") or []]
                    detail.append(f"{name}: conditions {conditions}; restartingPods {replacing}; pods {pods}")
                    short.append(f"{name} {state} replacing {replacing} pods " + ",".join(
                        f"{n.removeprefix(name + '-')}:{ph}{':del' if d else ''}:{u[:4]}" for n, ph, d, u in pods))
                print("faults: not final:\n  " + "\n  ".join(detail), file=sys.stderr, flush=True)
                raise AssertionError(f"{len(pending)} jobs not final {timeout} s after the faults: "
                                     + "; ".join(short) + f" ({e})") from None
            converged_s = time.monotonic() - faults_end
            total_s = time.monotonic() - start
            # Cleanup is part of the end state: give the last deletes a moment to be seen.
            wait_until("no parameter server left", lambda: not [
                p for p in get_json("pods", "-n", ns, "-l", "disttrain.io/replica-type=ps")["items"]
                if not p["metadata"].get("deletionTimestamp")], timeout=60)
            uids = watcher.snapshot()
        finally:
            watcher.stop()
            scrape_requests(operator, requests)
            code = operator.stop()
            proxy.stop()

    kinds = {name: kind for name, kind, _ in specs}
    wrong, duplicates = [], []
    for job in items:
        name = job["metadata"]["name"]
        kind = kinds[name]
        st = job["status"]
        failed = next((c for c in st.get("conditions", []) if c["type"] == "Failed" and c["status"] == "True"), None)
        want = {"ok": ("Succeeded", None), "fail": ("Failed", "ChiefFailed"),
                "backoff": ("Failed", "BackoffLimitExceeded")}[kind]
        if st.get("state") != want[0] or (want[1] and (failed or {}).get("reason") != want[1]):
            wrong.append(f"{name}: {st.get('state')} {(failed or {}).get('reason')}")
        restarts = sum(r.get("restarts", 0) for r in st.get("replicaStatuses", {}).values())
        if kind == "backoff" and restarts != BACKOFF_LIMIT:
            wrong.append(f"{name}: {restarts} restarts recorded, want {BACKOFF_LIMIT}")
    for pod, seen in uids.items():
        job = pod.rsplit("-", 2)[0]
        allowed = BACKOFF_LIMIT + 1 if kinds.get(job) == "backoff" and "-worker-" in pod else 1
        if len(seen) > allowed:
            duplicates.append(f"{pod}: {len(seen)} pods, at most {allowed} expected")
    total_requests = int(sum(requests.values()))
    return {
        "seed": seed, "jobs": jobs, "pods_seen": len(uids),
        "faults": [w for _, w in timeline if not w.startswith("applied") and w != "faults over"],
        "operator_kills": kills,
        "wrong_terminal_state": wrong, "duplicate_pods": duplicates,
        "requests_total": total_requests, "requests_per_job": round(total_requests / jobs, 1),
        "requests_by_code": {f"{m} {c}": int(n) for (c, m), n in sorted(requests.items())},
        "converged_after_faults_s": round(converged_s, 1), "total_s": round(total_s, 1),
        "operator_exit_code": code,
    }

