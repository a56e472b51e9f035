"""Runs build/bin/disttrain-operator against the local cluster for end-to-end tests."""
import os
import re
import signal
import subprocess
import time
import urllib.request

from kube import BIN, KUBECONFIG, LOG_DIR


class OperatorProcess:
    """One operator process with metrics and probes on free loopback ports."""

    def __init__(self, name="operator", *extra_args, kubeconfig=KUBECONFIG):
        self.name = name
        self.kubeconfig = kubeconfig
        self.extra_args = list(extra_args)
        self.proc = None
        self.offset = 0
        self.metrics_port = None
        self.health_port = None
        os.makedirs(LOG_DIR, exist_ok=True)
        self.log_path = os.path.join(LOG_DIR, f"{name}.log")

    def start(self, wait_ready=True):
        self.offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        self.metrics_port = self.health_port = None
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "disttrain-operator"), "--kubeconfig", self.kubeconfig,
             "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
             *self.extra_args],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.metrics_port is None:
            m = re.search(r"serving metrics_port=(\d+) health_port=(\d+)", self.read_log())
            if m:
                self.metrics_port, self.health_port = int(m.group(1)), int(m.group(2))
            elif self.proc.poll() is not None:
                raise AssertionError(f"operator exited with {self.proc.returncode}:\n{self.read_log()[-2000:]}")
            else:
                time.sleep(0.05)
        try:
            if self.metrics_port is None:
                raise AssertionError(f"operator did not start serving:\n{self.read_log()[-2000:]}")
            if wait_ready:
                self.wait_ready()
        except AssertionError:
            # A failed start leaves no operator behind: it would reconcile the next suites' jobs
            # (a failed setUpModule runs no tearDownModule).
            self.proc.kill()
            self.proc.wait()
            raise
        return self

    def read_log(self):
        """What this run of the process has logged so far."""
        with open(self.log_path) as f:
            f.seek(self.offset)
            return f.read()

    def http_get(self, port, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def wait_ready(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.http_get(self.health_port, "/readyz")[0] == 200:
                return
            time.sleep(0.05)
        raise AssertionError("operator never became ready")

    def metrics(self):
        return self.http_get(self.metrics_port, "/metrics")[1]

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, timeout=30):
        """SIGTERM, then wait; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode
