"""A second local control plane beside the suites' cluster (etcd, kube-apiserver and
kube-controller-manager; no node, no scheduler), for a test that needs two clusters: MultiKueue's
manager and its worker (tests/e2e/multikueue_test.py).

It is started by kwokctl from the same pinned binaries as tests/cluster/cluster-up.sh, in a work
folder under that cluster's own, so tests/cluster/cluster-down.sh also stops it should a suite die
before stopping it (it kills every process whose command line names that folder).
"""
import fcntl
import os
import shutil
import subprocess

import yaml

from kube import CLUSTER_DIR, LOG_DIR, ROOT, TOOLS, kubectl, wait_until

WORKDIR = os.path.join(CLUSTER_DIR, "kwok", "extra")


def pinned(name):
    with open(os.path.join(ROOT, "tests", "cluster", "tools", "versions.env")) as f:
        for line in f:
            if line.startswith(f"{name}="):
                return line.split("=", 1)[1].strip()
    raise AssertionError(f"{name} is not in tests/cluster/tools/versions.env")


def listening(port):
    """Whether a process of this machine listens on TCP `port`."""
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
    return bool(out.strip())


def flat_kubeconfig(kubeconfig):
    """The kubeconfig with its CA and client certificate inline, as a Secret must carry it
    (MultiKueue refuses paths to files)."""
    return kubectl("config", "view", "--raw", "--flatten", "--minify", kubeconfig=kubeconfig).stdout


class ControlPlane:
    def __init__(self, name):
        self.name = name
        self.kubeconfig = os.path.join(CLUSTER_DIR, f"{name}.kubeconfig")
        self.env = dict(os.environ, KWOK_WORKDIR=WORKDIR, PATH=f"{TOOLS}:{os.environ['PATH']}")
        self.log_path = os.path.join(LOG_DIR, f"{name}-create.log")

    def start(self):
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self.stop()  # a cluster of this name left by a run that died
        bin_ = lambda b: os.path.join(TOOLS, b)
        config = {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokctlConfiguration",
            "options": {
                "runtime": "binary", "kubeVersion": pinned("KUBERNETES_VERSION"), "bindAddress": "127.0.0.1",
                "kubeApiserverBinary": bin_("kube-apiserver"),
                "kubeControllerManagerBinary": bin_("kube-controller-manager"),
                "kubeSchedulerBinary": bin_("kube-scheduler"), "kubectlBinary": bin_("kubectl"),
                "etcdBinary": bin_("etcd"), "kwokControllerBinary": bin_("kwok"),
                "disableQPSLimits": True, "kubeAuthorization": True},
            "componentsPatches": [{"name": "kube-controller-manager",
                                   "extraArgs": [{"key": "leader-elect", "value": "false"}]}],
        }
        path = os.path.join(CLUSTER_DIR, f"{self.name}-kwokctl.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        # kwokctl picks free ports when it creates a cluster: one creation at a time with the lanes'
        # (tests/cluster/cluster-up.sh takes the same lock), held until every port it picked is
        # taken. Seen without it: a lane's kwok controller failing "bind: address already in use"
        # on a port this cluster had picked a moment before.
        os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
        with open(os.path.join(ROOT, "build", ".cluster-create.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            with open(self.log_path, "w") as log:
                result = subprocess.run(
                    [bin_("kwokctl"), "create", "cluster", "--name", self.name, "--config", path,
                     "--kubeconfig", self.kubeconfig, "--disable", "kube-scheduler,kwok-controller",
                     "--wait", "0s", "--timeout", "120s"],
                    env=self.env, stdout=log, stderr=subprocess.STDOUT, timeout=180)
            if result.returncode != 0:
                with open(self.log_path) as f:
                    raise AssertionError(f"kwokctl create cluster {self.name} exited {result.returncode}:\n"
                                         f"{f.read()[-3000:]}")
            wait_until(f"the API server of {self.name} to be ready", lambda: kubectl(
                "get", "--raw", "/readyz", check=False, kubeconfig=self.kubeconfig).returncode == 0, timeout=60)
            ports = self.ports()
            if not ports:
                raise AssertionError(f"no component ports in {self.name}'s kwok.yaml")
            wait_until(f"every port of {self.name} to listen", lambda: all(listening(p) for p in ports), timeout=60)
        return self

    def ports(self):
        with open(os.path.join(WORKDIR, "clusters", self.name, "kwok.yaml")) as f:
            return sorted({line.split()[1] for line in f if line.split()[:1] == ["port:"]})

    def stop(self):
        folder = os.path.join(WORKDIR, "clusters", self.name)
        if os.path.isdir(folder):
            subprocess.run([os.path.join(TOOLS, "kwokctl"), "delete", "cluster", "--name", self.name,
                            "--kubeconfig", self.kubeconfig], env=self.env, capture_output=True, timeout=120)
        # Whatever kwokctl left running is found by its command line, which names the folder.
        subprocess.run(["pkill", "-9", "-f", "--", folder + "/"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
        if os.path.exists(self.kubeconfig):
            os.remove(self.kubeconfig)
