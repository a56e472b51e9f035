"""A real Prometheus (Debian's prometheus package) for end-to-end tests: it scrapes what the
chart's PodMonitor and ServiceMonitor select, evaluates the shipped alert rules, and answers
PromQL over its HTTP API.

Debian builds Prometheus without its Kubernetes service discovery ("field kubernetes_sd_configs
not found"), so the selection a monitor describes (its labels, its named port; the namespace,
pod, container and service labels Prometheus Operator's relabelling gives) is made here from the
API server and handed to Prometheus through file_sd files kept up to date by a thread."""
import json
import math
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import yaml

from kube import LOG_DIR, get_json


def _selector(match_labels):
    return ",".join(f"{k}={v}" for k, v in sorted(match_labels.items()))


def pod_monitor_targets(monitor, namespace):
    """What a PodMonitor (its first endpoint) selects in `namespace`: running pods with its labels,
    their container port of its name; labelled namespace, pod, container as Prometheus Operator
    does."""
    port = monitor["spec"]["podMetricsEndpoints"][0]["port"]
    pods = get_json("pods", "-n", namespace, "-l", _selector(monitor["spec"]["selector"]["matchLabels"]))
    out = []
    for pod in pods["items"]:
        ip = pod.get("status", {}).get("podIP")
        if not ip or pod["status"].get("phase") in ("Succeeded", "Failed"):
            continue  # ended pods are dropped (Prometheus Operator's relabelling does too)
        for c in pod["spec"]["containers"]:
            for p in c.get("ports", []):
                if p.get("name") == port:
                    out.append({"targets": [f"{ip}:{p['containerPort']}"],
                                "labels": {"namespace": namespace, "pod": pod["metadata"]["name"],
                                           "container": c["name"]}})
    return out


def service_monitor_targets(monitor, namespace):
    """What a ServiceMonitor (its first endpoint) selects in `namespace`: the ready endpoints of the
    Services with its labels, on the port of its name; labelled namespace, service, pod."""
    port = monitor["spec"]["endpoints"][0]["port"]
    out = []
    services = get_json("services", "-n", namespace, "-l", _selector(monitor["spec"]["selector"]["matchLabels"]))
    for svc in services["items"]:
        name = svc["metadata"]["name"]
        endpoints = get_json("endpoints", name, "-n", namespace)
        for subset in endpoints.get("subsets", []):
            numbers = [p["port"] for p in subset.get("ports", []) if p.get("name") == port]
            for address in subset.get("addresses", []):
                for number in numbers:
                    out.append({"targets": [f"{address['ip']}:{number}"],
                                "labels": {"namespace": namespace, "service": name,
                                           "pod": address.get("targetRef", {}).get("name", "")}})
    return out


class Discovery(threading.Thread):
    """Keeps a file_sd file per scrape job up to date (every `every` seconds) from a function that
    lists its targets, until stop()."""

    def __init__(self, files, every=2.0):
        super().__init__(daemon=True)
        self.files = files  # {path: fn() -> file_sd groups}
        self.every = every
        self.stopped = threading.Event()
        self.errors = []
        self.refresh()

    def refresh(self):
        for path, fn in self.files.items():
            try:
                groups = fn()
            except Exception as e:  # a kubectl hiccup: keep the last list, say so if asked
                self.errors.append(repr(e))
                continue
            with open(path + ".tmp", "w") as f:
                json.dump(groups, f)
            os.replace(path + ".tmp", path)

    def run(self):
        while not self.stopped.wait(self.every):
            self.refresh()

    def stop(self):
        self.stopped.set()
        self.join(timeout=30)


class PrometheusProcess:
    """prometheus on a free loopback port with its own storage, stopped by stop(). `jobs`:
    {scrape job name: (metrics path, fn() -> its targets as file_sd groups)}."""

    def __init__(self, jobs, rule_files=(), interval="2s"):
        self.dir = tempfile.mkdtemp(prefix="disttrain-prometheus-")
        scrape_configs, files = [], {}
        for i, (name, (path, targets)) in enumerate(sorted(jobs.items())):
            files[os.path.join(self.dir, f"targets-{i}.json")] = targets
            scrape_configs.append({"job_name": name, "metrics_path": path,
                                   "file_sd_configs": [{"files": [os.path.join(self.dir, f"targets-{i}.json")],
                                                        "refresh_interval": interval}]})
        config = {"global": {"scrape_interval": interval, "evaluation_interval": interval},
                  "rule_files": list(rule_files), "scrape_configs": scrape_configs}
        self.config_path = os.path.join(self.dir, "prometheus.yml")
        with open(self.config_path, "w") as f:
            yaml.safe_dump(config, f)
        self.discovery = Discovery(files, every=2.0)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        os.makedirs(LOG_DIR, exist_ok=True)
        self.log_path = os.path.join(LOG_DIR, "prometheus.log")
        self.proc = None

    def start(self, timeout=60):
        binary = shutil.which("prometheus")
        if binary is None:
            raise AssertionError("prometheus not found: scripts/install-deps.sh installs Debian's prometheus")
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                [binary, f"--config.file={self.config_path}", f"--storage.tsdb.path={self.dir}/data",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-lifecycle"],
                stdout=log, stderr=subprocess.STDOUT)
        self.discovery.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited with {self.proc.returncode}: see {self.log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"prometheus not ready in {timeout} s: see {self.log_path}")

    def stop(self):
        if self.discovery.is_alive():
            self.discovery.stop()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr):
        """An instant query's samples: [(labels, value)], NaN and infinite values left out."""
        data = self.api("query", query=expr)
        out = []
        for sample in data["result"] if data["resultType"] == "vector" else []:
            value = float(sample["value"][1])
            if math.isfinite(value):
                out.append((sample["metric"], value))
        return out

    def targets(self):
        return self.api("targets")["activeTargets"]

    def alerts(self):
        return self.api("alerts")["alerts"]
