"""Kueue (sigs.k8s.io/kueue, pinned in tests/cluster/tools/versions.env) as a process against the
local control plane, as the queueing suite and its benchmark need it: its CRDs, its webhooks
served on a loopback port with a self-signed certificate (the API server calls them by URL),
and a configuration whose integrations.externalFrameworks names DistributedTraining.

Kueue's manager always reads a metrics certificate from /etc/kueue/metrics/certs once its
internal certificate management is off (cmd/kueue/main.go); the harness writes a self-signed
one there when none exists (the suite runs as root, as the real node's does).
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
import ssl

import yaml

from kube import KUBECONFIG, LOG_DIR, ROOT, apply, kubectl, wait_established, wait_until

KUEUE_DIR = os.path.join(ROOT, "build", "tools", "kueue")
METRICS_CERTS = "/etc/kueue/metrics/certs"
EXTERNAL_FRAMEWORK = "DistributedTraining.v1.disttrain.io"
# CRDs whose versions Kueue converts through its /convert webhook (config/components/crd/patches).
CONVERTED = {"localqueues", "clusterqueues", "cohorts", "workloads", "multikueueclusters"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_signed(folder, name, san="IP:127.0.0.1"):
    """A CA and a serving certificate for `san` in `folder` (tls.crt, tls.key, ca.crt)."""
    os.makedirs(folder, exist_ok=True)
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
    ca_key, ca_crt = os.path.join(folder, "ca.key"), os.path.join(folder, "ca.crt")
    key, csr, crt = (os.path.join(folder, f) for f in ("tls.key", "tls.csr", "tls.crt"))
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", f"/CN={name}-ca",
        "-keyout", ca_key, "-out", ca_crt)
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", key, "-out", csr)
    ext = os.path.join(folder, "san.ext")
    with open(ext, "w") as f:
        f.write(f"subjectAltName={san}\n")
    run("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial", "-days", "30",
        "-extfile", ext, "-out", crt)
    with open(ca_crt, "rb") as f:
        return base64.b64encode(f.read()).decode()


def build_kueue():
    """Points KUEUE_DIR at the built Kueue (tests/cluster/tools/build-kueue.sh: cached by version;
    while `make test` builds it in the background, the script waits for that build)."""
    global KUEUE_DIR
    if os.path.exists(os.path.join(KUEUE_DIR, "kueue")):
        return
    out = subprocess.run([os.path.join(ROOT, "tests", "cluster", "tools", "build-kueue.sh")],
                         capture_output=True, text=True, timeout=1200)
    if out.returncode != 0:
        raise AssertionError(f"build-kueue.sh failed: {out.stderr[-2000:]}")
    KUEUE_DIR = out.stdout.strip().splitlines()[-1]


class Kueue:
    """One Kueue manager; install() once per cluster (CRDs and webhook configurations), then
    start()/stop() as a test needs (stopping it leaves its webhooks registered, failing closed,
    as a crashed Kueue would)."""

    def __init__(self, name="kueue", wait_for_pods_ready=None, extra_frameworks=(), kubeconfig=KUBECONFIG,
                 multikueue=False, as_service_account=False):
        build_kueue()
        self.name = name
        self.folder = os.path.join(LOG_DIR, name)
        self.webhook_port = free_port()
        self.health_port = free_port()
        self.wait_for_pods_ready = wait_for_pods_ready
        # Built-in integrations to enable besides batch/job, e.g. "workload.codeflare.dev/appwrapper"
        # (the AppWrapper trial, docs/notes/kueue.md); their API groups' webhooks are registered too.
        self.extra_frameworks = list(extra_frameworks)
        # The cluster it runs against, and whether it is a MultiKueue manager dispatching
        # DistributedTrainings to worker clusters (tests/e2e/multikueue_test.py).
        self.kubeconfig = kubeconfig
        self.multikueue = multikueue
        # Run as Kueue's own ServiceAccount with only the rules of its release's RBAC (and what a
        # cluster admin grants it besides), not as the admin: what it cannot do then shows.
        self.as_service_account = as_service_account
        self.process_kubeconfig = kubeconfig
        self.proc = None
        self.log_path = os.path.join(LOG_DIR, f"{name}.log")

    # --- installation ---------------------------------------------------------------------------
    def install(self):
        shutil.rmtree(self.folder, ignore_errors=True)
        self.ca_bundle = self_signed(os.path.join(self.folder, "webhook"), "kueue-webhook")
        if not os.path.exists(os.path.join(METRICS_CERTS, "tls.crt")):
            # One folder for every Kueue of every lane: made aside and renamed into place, so a
            # Kueue starting in another lane at the same time never reads half of it.
            staging = f"{METRICS_CERTS}.{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            self_signed(staging, "kueue-metrics")
            os.makedirs(os.path.dirname(METRICS_CERTS), exist_ok=True)
            try:
                os.rename(staging, METRICS_CERTS)
            except OSError:  # another lane's came first
                shutil.rmtree(staging, ignore_errors=True)
        url = lambda path: {"url": f"https://127.0.0.1:{self.webhook_port}{path}", "caBundle": self.ca_bundle}
        crds = []
        crd_dir = os.path.join(KUEUE_DIR, "crd")
        for f in sorted(os.listdir(crd_dir)):
            with open(os.path.join(crd_dir, f)) as fh:
                crd = yaml.safe_load(fh)
            if crd["spec"]["names"]["plural"] in CONVERTED:
                crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
                    "clientConfig": url("/convert"), "conversionReviewVersions": ["v1"]}}
            crds.append(crd)
        # Server-side: Kueue's CRDs are larger than client-side apply's last-applied annotation allows.
        kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": crds}), timeout=120,
                kubeconfig=self.kubeconfig)
        for crd in crds:
            wait_established(f"crd/{crd['metadata']['name']}", self.kubeconfig)
        configs = []
        with open(os.path.join(KUEUE_DIR, "webhook-manifests.yaml")) as fh:
            for doc in yaml.safe_load_all(fh):
                if not doc:
                    continue
                # Only the webhooks of Kueue's own resources and of the extra frameworks' groups: the
                # batch/job integration's would intercept every job of the cluster.
                groups = {"kueue.x-k8s.io"} | {f.split("/")[0] for f in self.extra_frameworks}
                hooks = [h for h in doc.get("webhooks", [])
                         if all(g in groups for r in h.get("rules", []) for g in r.get("apiGroups", []))]
                for h in hooks:
                    h["clientConfig"] = url(h["clientConfig"]["service"]["path"])
                doc["webhooks"] = hooks
                doc["metadata"] = {"name": f"disttrain-e2e-{doc['metadata']['name']}"}
                configs.append(doc)
        self.webhook_configs = [(d["kind"].lower(), d["metadata"]["name"]) for d in configs]
        apply({"apiVersion": "v1", "kind": "List", "items": configs}, kubeconfig=self.kubeconfig)
        if self.as_service_account:
            self.process_kubeconfig = self.service_account_kubeconfig()
        return self

    def service_account_kubeconfig(self):
        """Kueue's ServiceAccount (kueue-system/kueue-controller-manager, as its release names it)
        bound to its release's manager ClusterRole and Secrets Role; a kubeconfig with its token."""
        ns, sa = "kueue-system", "kueue-controller-manager"
        objects = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": ns}}]
        for f, kind in (("role.yaml", "ClusterRole"), ("manager_secrets_role.yaml", "Role")):
            with open(os.path.join(KUEUE_DIR, "rbac", f)) as fh:
                role = next(d for d in yaml.safe_load_all(fh) if d)
            name = f"disttrain-e2e-kueue-{role['metadata']['name']}"
            role["metadata"] = {"name": name, **({"namespace": ns} if kind == "Role" else {})}
            binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": f"{kind}Binding",
                       "metadata": dict(role["metadata"]),
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
                       "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}
            objects += [role, binding]
        if kubectl("get", "namespace", ns, check=False, kubeconfig=self.kubeconfig).returncode != 0:
            kubectl("create", "namespace", ns, kubeconfig=self.kubeconfig)
        apply({"apiVersion": "v1", "kind": "List", "items": objects}, kubeconfig=self.kubeconfig)
        token = kubectl("create", "token", sa, "-n", ns, "--duration", "2h", kubeconfig=self.kubeconfig).stdout.strip()
        config = yaml.safe_load(kubectl("config", "view", "--raw", "--flatten", "--minify",
                                        kubeconfig=self.kubeconfig).stdout)
        config["users"][0]["user"] = {"token": token}
        path = os.path.join(self.folder, "kubeconfig")
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        return path

    def config(self):
        cfg = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
            "namespace": "kueue-system",
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": self.webhook_port,
                        "certDir": os.path.join(self.folder, "webhook")},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health_port}"},
            "manageJobsWithoutQueueName": False,
            "integrations": {"frameworks": ["batch/job", *self.extra_frameworks],
                             "externalFrameworks": [EXTERNAL_FRAMEWORK]},
        }
        if self.multikueue:
            # The generic adapter for a kind Kueue does not compile in (feature gate
            # MultiKueueAdaptersForCustomJobs, Beta and on in v0.17).
            cfg["multiKueue"] = {"externalFrameworks": [{"name": EXTERNAL_FRAMEWORK}]}
        if self.wait_for_pods_ready:
            cfg["waitForPodsReady"] = {"timeout": self.wait_for_pods_ready, "blockAdmission": False}
        return cfg

    # --- the process ----------------------------------------------------------------------------
    def start(self):
        path = os.path.join(self.folder, "config.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(self.config(), f)
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [os.path.join(KUEUE_DIR, "kueue"), f"--config={path}", f"--kubeconfig={self.process_kubeconfig}",
             "--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2"],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_until("Kueue to be ready (webhooks served)", self.ready, timeout=90)
        return self

    def ready(self):
        if self.proc.poll() is not None:
            with open(self.log_path) as f:
                raise AssertionError(f"kueue exited {self.proc.returncode}: {f.read()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as r:
                if r.status != 200:
                    return False
        except OSError:
            return False
        # The webhook answers TLS with the certificate the configurations trust.
        ctx = ssl.create_default_context(cafile=os.path.join(self.folder, "webhook", "ca.crt"))
        try:
            with socket.create_connection(("127.0.0.1", self.webhook_port), timeout=2) as s:
                with ctx.wrap_socket(s, server_hostname="127.0.0.1"):
                    return True
        except OSError:
            return False

    def stop(self, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def uninstall(self):
        """Removes the webhook configurations, so a stopped Kueue blocks nothing after the suite."""
        for kind, name in getattr(self, "webhook_configs", []):
            kubectl("delete", kind, name, "--ignore-not-found", check=False, kubeconfig=self.kubeconfig)


def start_with_operator(kueue_name, operator_name, *operator_args):
    """A Kueue manager and an operator process that queues through it (--kueue), both started."""
    from operator_process import OperatorProcess
    kueue = Kueue(kueue_name).install().start()
    return kueue, OperatorProcess(operator_name, "--kueue", *operator_args).start()


def stop_with_operator(kueue, operator):
    """Stops what start_with_operator started (either may be None); the operator's exit code."""
    code = operator.stop() if operator else 0
    if kueue:
        kueue.stop()
        kueue.uninstall()
    return code


def remove_after_namespace(ns, objects, timeout=180):
    """Waits for namespace ns to be gone (the operator, still running, removes Kueue's finalizer
    from its jobs' Workloads), then deletes the cluster-scoped (kind, name) objects."""
    wait_until(f"namespace {ns} to be gone", lambda: kubectl(
        "get", "namespace", ns, check=False).returncode != 0, timeout=timeout)
    for kind, name in objects:
        kubectl("delete", kind, name, "--ignore-not-found", "--wait=false", check=False)
