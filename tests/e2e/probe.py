"""build/bin/informer_probe as a test helper: an independent watch on pods or Services that records
every event with its UID, so tests observe what was created or deleted instead of inferring it."""
import json
import os
import subprocess
import threading

from kube import BIN, KUBECONFIG, wait_until


class Probe:
    """build/bin/informer_probe on pods of one namespace; collects its JSON lines."""

    def __init__(self, ns, selector="probe=yes", kubeconfig=KUBECONFIG, resource="pods"):
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "informer_probe"), "--kubeconfig", kubeconfig, "--namespace", ns,
             "--selector", selector, "--resource", resource], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        self.lines = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        wait_until("the probe to sync", lambda: self.find("synced"), timeout=30)

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(json.loads(line))

    def find(self, event, name=None):
        with self.lock:
            return [l for l in self.lines if l["event"] == event and (name is None or l.get("name") == name)]

    def events_for(self, name):
        with self.lock:
            return [l["event"] for l in self.lines if l.get("name") == name]

    def stats(self):
        n = len(self.find("stats"))
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return wait_until("stats", lambda: len(self.find("stats")) > n and self.find("stats")[-1], timeout=10)

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
