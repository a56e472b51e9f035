"""Kubeflow's training-operator (the peer, built by bench/peer/build-peer.sh) run out of cluster
against the local control plane, for the benchmarks and the TFJob migration suite."""
import base64
import os
import re
import socket
import subprocess
import tempfile

from kube import KUBECONFIG, ROOT, apply, get_json, kubectl, wait_until

PEER_NS = "disttrain-peer-system"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_peer():
    """The folder with the training-operator binary and its TFJob CRD (built once, cached)."""
    out = subprocess.run([os.path.join(ROOT, "bench", "peer", "build-peer.sh")], capture_output=True, text=True,
                         timeout=1200)
    if out.returncode != 0:
        raise AssertionError(f"build-peer.sh failed: {out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]


class Peer:
    """training-operator out of cluster: its webhook certificate secret and configuration exist
    (empty, so no admission call is ever made), it serves its webhook on a free port, and the
    certificates its rotator writes into the secret are copied where a pod would mount them (it
    starts its controllers only once they are there)."""

    CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"

    def __init__(self, folder, args):
        self.folder, self.args, self.proc = folder, args, None

    @staticmethod
    def install(folder):
        kubectl("apply", "--server-side", "--force-conflicts", "-f", os.path.join(folder, "kubeflow.org_tfjobs.yaml"))
        wait_until("the TFJob CRD to be established", lambda: any(
            c["type"] == "Established" and c["status"] == "True"
            for c in get_json("crd", "tfjobs.kubeflow.org").get("status", {}).get("conditions") or []))
        kubectl("create", "namespace", PEER_NS, check=False)
        apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "training-operator-webhook-cert"}}, PEER_NS)
        apply({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": "validator.training-operator.kubeflow.org"}, "webhooks": []})

    def start(self):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="peer-", suffix=".log", delete=False)
        env = dict(os.environ, KUBECONFIG=KUBECONFIG, MY_POD_NAMESPACE=PEER_NS)
        self.metrics_port = free_port()
        self.proc = subprocess.Popen(
            [os.path.join(self.folder, "training-operator"), "--enable-scheme=tfjob",
             f"--metrics-bind-address=127.0.0.1:{self.metrics_port}", "--health-probe-bind-address=127.0.0.1:0",
             f"--webhook-server-port={free_port()}", *self.args], stdout=self.log, stderr=subprocess.STDOUT, env=env)
        wait_until("the peer's webhook certificates", self.mount_certs, timeout=60)
        wait_until("the peer's TFJob controller to start its workers", lambda: self.ready(), timeout=120)
        return self

    def requests(self):
        """{method: count} of the API requests made so far (client-go's rest_client_requests_total,
        the metric our operator also exports), "reconciles": controller-runtime's reconcile count."""
        text = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{self.metrics_port}/metrics"],
                              capture_output=True, text=True, timeout=10).stdout
        counts = {}
        for m in re.finditer(r'^rest_client_requests_total\{[^}]*method="(\w+)"[^}]*\} (\S+)$', text, re.M):
            counts[m.group(1)] = counts.get(m.group(1), 0) + int(float(m.group(2)))
        counts["reconciles"] = sum(int(float(m.group(1))) for m in re.finditer(
            r'^controller_runtime_reconcile_total\{[^}]*\} (\S+)$', text, re.M))
        return counts

    def mount_certs(self):
        data = get_json("secret", "training-operator-webhook-cert", "-n", PEER_NS).get("data", {})
        if not all(data.get(k) for k in ("tls.crt", "tls.key", "ca.crt")):  # present and filled
            return False
        os.makedirs(self.CERT_DIR, exist_ok=True)
        for key in ("tls.crt", "tls.key", "ca.crt"):
            # Written beside and renamed: the peer of another lane (the same folder: it is the
            # peer's fixed path) reading it at that moment sees the old file or the new, never a
            # truncated one ("tls: failed to find any PEM data", CI run of 2026-12-07).
            part = os.path.join(self.CERT_DIR, f".{key}.{os.getpid()}")
            with open(part, "wb") as f:
                f.write(base64.b64decode(data[key]))
            os.replace(part, os.path.join(self.CERT_DIR, key))
        return True

    def ready(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"training-operator exited {self.proc.returncode}: {open(self.log.name).read()[-2000:]}")
        return re.search(r'Starting workers\s+{"controller": "tfjob-controller"', open(self.log.name).read())

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
