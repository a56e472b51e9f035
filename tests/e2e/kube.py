"""Helpers for end-to-end tests: kubectl against the local cluster, and waits on observed state.

Waits poll the API server for a condition a user could observe, with a deadline; they never
sleep a fixed time as a stand-in for synchronisation.
"""
import json
import os
import ssl
import subprocess
import time
import uuid

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
KUBECONFIG = os.environ.get("DISTTRAIN_KUBECONFIG", os.path.join(ROOT, "build/cluster/kubeconfig"))
TOOLS = os.environ.get("DISTTRAIN_TOOLS", os.path.join(ROOT, "build/tools/bin"))
BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(ROOT, "build/bin"))


class KubectlError(Exception):
    def __init__(self, args, result):
        super().__init__(f"kubectl {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
        self.stderr = result.stderr
        self.returncode = result.returncode


def kubectl(*args, input=None, check=True, timeout=60, kubeconfig=None):
    """Runs kubectl with the cluster's kubeconfig (or another cluster's); returns the
    CompletedProcess."""
    cmd = [os.path.join(TOOLS, "kubectl"), "--kubeconfig", kubeconfig or KUBECONFIG, *args]
    result = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise KubectlError(args, result)
    return result


def get_json(*args, kubeconfig=None):
    return json.loads(kubectl("get", *args, "-o", "json", kubeconfig=kubeconfig).stdout)


def https_client():
    """(server URL, SSL context with the kubeconfig's CA and client certificate) for raw API calls."""
    cfg = json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)
    cluster, user = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]
    ctx = ssl.create_default_context(cafile=cluster["certificate-authority"])
    ctx.load_cert_chain(user["client-certificate"], user["client-key"])
    return cluster["server"], ctx


def apply(manifest, namespace=None, kubeconfig=None):
    args = ["apply", "-f", "-"] + (["-n", namespace] if namespace else [])
    return kubectl(*args, input=manifest if isinstance(manifest, str) else json.dumps(manifest),
                   kubeconfig=kubeconfig)


def wait_until(what, predicate, timeout=60.0, interval=0.2):
    """Polls predicate() until it returns a truthy value, which is returned; fails after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except KubectlError as e:
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last seen: {last!r}")


def wait_established(crd, kubeconfig=None, timeout=60):
    """Waits for a CRD just applied to be Established. `kubectl wait` fails at once, instead of
    waiting, while the CRD has no status.conditions yet (seen on a fresh control plane under
    load), so each try is short and a failed one is repeated."""
    wait_until(f"{crd} to be established", lambda: kubectl(
        "wait", "--for=condition=Established", crd, "--timeout=5s", check=False,
        kubeconfig=kubeconfig).returncode == 0, timeout=timeout)


class Namespace:
    """A fresh namespace per test class, deleted afterwards (with everything in it)."""

    def __init__(self, prefix):
        self.name = f"{prefix}-{uuid.uuid4().hex[:6]}"

    def __enter__(self):
        kubectl("create", "namespace", self.name)
        # Pods are refused until kube-controller-manager has made the default service account.
        wait_until(f"namespace {self.name} to have its default service account",
                   lambda: kubectl("get", "serviceaccount", "default", "-n", self.name, check=False).returncode == 0,
                   timeout=30)
        return self.name

    def __exit__(self, *exc):
        kubectl("delete", "namespace", self.name, "--wait=false", check=False)
