"""A job's NetworkPolicy enforced for real on the local real node (issue #36).

kube-router's firewall (iptables + ipset; built by tests/cluster/tools/build-kube-router.sh, a test
tool only) runs beside the kubelet for this suite and is removed afterwards with its chains and
sets. The operator gives the training job its NetworkPolicy (the default); the job trains on the
real node; stranger pods try the parameter server's port and the metrics port:

- a pod of another namespace and a pod of another job in the job's namespace: refused or timed out
  on the parameter server's port, both for a TCP connect and for a push made with a gRPC client
  generated from proto/ (grpcio, in the stranger's pod), while the job's own workers train to the
  usual accuracy;
- the metrics port: reachable from the namespace metricsFrom names, not from another;
- the policy deleted: the stranger connects and its push reaches the server (so the test can fail).

The job's namespace enforces Pod Security "restricted", and its pods run with a read-only root
filesystem (an emptyDir on /tmp, where a trainer without --model-dir keeps its checkpoints).

Run as a script with the tests' venv (tests/python/run.sh; grpcio-tools generates the stubs the
stranger's pod uses): without a real node (or without root, iptables and ipset) it exits 77, which
ctest reports as not run."""
import base64
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import realnode
from crd_test import install_crd
from kube import KUBECONFIG, LOG_DIR, ROOT, Namespace, apply, get_json, kubectl, wait_until
from operator_process import OperatorProcess

sys.path.insert(0, os.path.join(ROOT, "tests", "trainer"))
from ps_grpc_client_test import pb  # noqa: E402  (generates the stubs from proto/)

OPERATOR = None
KUBE_ROUTER = None
LOG = os.path.join(LOG_DIR, "kube-router.log")
# What kube-router v2.1.0 leaves behind (its --cleanup-config panics in that release).
CHAIN_PREFIXES = ("KUBE-ROUTER-", "KUBE-POD-FW-", "KUBE-NWPLCY-")
SET_PREFIXES = ("KUBE-SRC-", "KUBE-DST-", "kube-router-")


def real_node_name():
    return get_json("nodes", "-l", f"{realnode.NODE_LABEL}=true")["items"][0]["metadata"]["name"]


def cleanup_kube_router():
    """Removes kube-router's iptables chains (and the jumps to them) and its ipsets."""
    for table in ("filter", "nat", "mangle"):
        rules = subprocess.run(["iptables", "-t", table, "-S"], capture_output=True, text=True).stdout
        for line in rules.splitlines():
            parts = shlex.split(line)  # its rules carry quoted comments
            if parts[:1] == ["-A"] and any(p.startswith(CHAIN_PREFIXES) for p in parts[2:]) \
                    and not parts[1].startswith(CHAIN_PREFIXES):
                subprocess.run(["iptables", "-t", table, "-D", *parts[1:]], capture_output=True)
        chains = [l.split()[1] for l in rules.splitlines() if l.startswith("-N ") and l.split()[1].startswith(CHAIN_PREFIXES)]
        for chain in chains:
            subprocess.run(["iptables", "-t", table, "-F", chain], capture_output=True)
        for chain in chains:
            subprocess.run(["iptables", "-t", table, "-X", chain], capture_output=True)
    names = subprocess.run(["ipset", "list", "-n"], capture_output=True, text=True).stdout.split()
    for name in names:
        if name.startswith(SET_PREFIXES):
            subprocess.run(["ipset", "destroy", name], capture_output=True)


def kube_router_path():
    """Builds kube-router once (cached by version) and returns its path."""
    script = os.path.join(ROOT, "tests", "cluster", "tools", "build-kube-router.sh")
    return subprocess.run([script], capture_output=True, text=True, check=True, timeout=900).stdout.strip()


def start_kube_router():
    cleanup_kube_router()  # what an interrupted run left
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    with open(LOG, "a") as log:
        proc = subprocess.Popen([kube_router_path(), f"--kubeconfig={KUBECONFIG}", "--run-firewall=true",
                                 "--run-router=false", "--run-service-proxy=false", "--enable-cni=false",
                                 f"--hostname-override={real_node_name()}", "--metrics-port=0",
                                 "--health-port=0"], stdout=log, stderr=subprocess.STDOUT)
    # Its firewall is in place once its top chains hook the kernel's.
    try:
        wait_until("kube-router's firewall chains", lambda: proc.poll() is None and "KUBE-ROUTER-FORWARD" in
                   subprocess.run(["iptables", "-S"], capture_output=True, text=True).stdout, timeout=60)
    except AssertionError:
        # Nothing left behind for the next suites (a failed setUpModule runs no tearDownModule).
        proc.kill()
        proc.wait()
        cleanup_kube_router()
        with open(LOG) as f:
            raise AssertionError(f"kube-router did not start; last lines of {LOG}:\n{f.read()[-2000:]}")
    return proc


def setUpModule():
    global OPERATOR, KUBE_ROUTER
    realnode.exit_unless_up()
    missing = [t for t in ("iptables", "ipset") if shutil.which(t) is None]
    if os.geteuid() != 0 or missing:
        print(f"isolation suite NOT RUN: needs root and {', '.join(missing) or 'iptables/ipset'}", file=sys.stderr)
        sys.exit(realnode.SKIPPED)
    install_crd()
    KUBE_ROUTER = start_kube_router()
    try:
        OPERATOR = OperatorProcess("isolation").start()
    except Exception:
        tearDownModule()
        raise


def tearDownModule():
    if OPERATOR is not None:
        OPERATOR.stop()
    if KUBE_ROUTER is not None:
        KUBE_ROUTER.send_signal(signal.SIGTERM)
        try:
            KUBE_ROUTER.wait(timeout=15)
        except subprocess.TimeoutExpired:
            KUBE_ROUTER.kill()
            KUBE_ROUTER.wait()
    cleanup_kube_router()


RESTRICTED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def trainer_role(replicas, args):
    container = {"name": "tensorflow", "image": realnode.TRAINER_IMAGE, "imagePullPolicy": "Never",
                 "args": ["--model=mlp", "--mode=sync", "--batch-size=64", "--learning-rate=0.1",
                          "--log-every=250", *args],
                 "ports": [{"name": "metrics", "containerPort": 9095}],
                 "securityContext": {**RESTRICTED, "readOnlyRootFilesystem": True},
                 "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}
    spec = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container], "volumes": [{"name": "tmp", "emptyDir": {}}]}
    return {"replicas": replicas, "restartPolicy": "OnFailure", "template": {"spec": realnode.on_real_node(spec)}}


# A pod that tries TCP connections for the test (kubectl exec): Python from the TensorFlow example image.
PROBE = """
import socket, sys
host, port, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
try:
    socket.create_connection((host, port), timeout=timeout).close()
    print("connected")
except OSError as e:
    print("refused" if isinstance(e, ConnectionRefusedError) else "timeout" if isinstance(e, socket.timeout) else repr(e))
"""


# A push from a stranger's pod with the gRPC client generated from proto/ (the example image has the
# same grpcio and protobuf as the tests' venv): the generated modules travel in the script itself.
def generated_modules():
    out = {}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(pb.__file__))))
    for name in ("parameter_server_pb2.py", "parameter_server_pb2_grpc.py"):
        path = os.path.join(os.path.dirname(pb.__file__), name)
        with open(path, "rb") as f:
            out[os.path.relpath(path, root)] = base64.b64encode(f.read()).decode()
    return out


PUSH = """
import base64, os, sys, tempfile
host, port, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
d = tempfile.mkdtemp()
for path, data in MODULES.items():
    os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
    with open(os.path.join(d, path), "wb") as f:
        f.write(base64.b64decode(data))
sys.path.insert(0, d)
import grpc
from disttrain.trainer.v1 import parameter_server_pb2 as pb, parameter_server_pb2_grpc as pb_grpc
stub = pb_grpc.ParameterServerStub(grpc.insecure_channel(f"{host}:{port}"))
header = pb.PushPullRequest(header=pb.PushPullHeader(step=0, worker="stranger", push=True))
try:
    for reply in stub.PushPull(iter([header]), timeout=timeout):
        pass
    print("reached: OK")
except grpc.RpcError as e:
    transport = e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    print(("unreachable: " if transport else "reached: ") + e.code().name)
""".replace("MODULES", repr(generated_modules()))


class IsolationTest(unittest.TestCase):
    def setUp(self):
        self.contexts = [Namespace("iso"), Namespace("iso-mon"), Namespace("iso-other")]
        self.ns, self.monitoring, self.other = [c.__enter__() for c in self.contexts]
        kubectl("label", "namespace", self.ns, "pod-security.kubernetes.io/enforce=restricted")

    def tearDown(self):
        for c in self.contexts:
            c.__exit__(None, None, None)

    def probe_pod(self, name, ns, labels=None):
        spec = realnode.on_real_node({"containers": [{
            "name": "probe", "image": realnode.TF_EXAMPLE_IMAGE, "imagePullPolicy": "Never",
            "command": ["python3", "-c", "import time; time.sleep(3600)"], "securityContext": RESTRICTED}],
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
            "terminationGracePeriodSeconds": 0})
        apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}, ns)
        wait_until(f"probe pod {ns}/{name}", lambda: get_json("pod", name, "-n", ns)["status"].get("phase") == "Running",
                   timeout=120)
        return name, ns

    def connect(self, probe, host, port, timeout=3):
        name, ns = probe
        r = kubectl("exec", "-n", ns, name, "--", "python3", "-c", PROBE, host, str(port), str(timeout),
                    check=False, timeout=60)
        return r.stdout.strip() or r.stderr.strip()

    def push(self, probe, host, port, timeout=5):
        """A push to the parameter server from `probe`'s pod: "reached: <code>" when the call got to the
        server (a header-only push is refused by it, not by the network), else "unreachable: <code>"."""
        name, ns = probe
        r = kubectl("exec", "-n", ns, name, "--", "python3", "-c", PUSH, host, str(port), str(timeout),
                    check=False, timeout=120)
        return r.stdout.strip() or r.stderr.strip()[-500:]

    def test_only_the_jobs_own_pods_reach_its_parameter_servers(self):
        job = {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "fenced"},
               "spec": {"networkPolicy": {"metricsFrom": [{"namespaceSelector": {"matchLabels": {
                   "kubernetes.io/metadata.name": self.monitoring}}}]},
                        "replicaSpecs": {"Chief": trainer_role(1, ["--steps=1500", "--checkpoint-steps=500"]),
                                         "PS": trainer_role(1, ["--steps=1500"]),
                                         "Worker": trainer_role(2, ["--steps=1500"])}}}
        apply(job, self.ns)
        policy = wait_until("the job's NetworkPolicy", lambda: get_json("networkpolicy", "fenced", "-n", self.ns),
                            timeout=30)
        ps = wait_until("ps 0 running", lambda: (p := get_json("pod", "fenced-ps-0", "-n", self.ns))["status"].get(
            "phase") == "Running" and p.get("status", {}).get("podIP") and p, timeout=180)
        ps_ip = ps["status"]["podIP"]
        stranger = self.probe_pod("stranger", self.other)
        neighbour = self.probe_pod("neighbour", self.ns, {"disttrain.io/job-name": "another"})
        prometheus = self.probe_pod("prometheus", self.monitoring)

        # kube-router needs a moment to sync a new pod into its sets: look twice.
        for probe in (stranger, neighbour):
            outcomes = [self.connect(probe, ps_ip, 2222) for _ in range(2)]
            print(f"{probe[1]}/{probe[0]} -> ps 0:2222: {outcomes}")
            self.assertNotIn("connected", outcomes, f"{probe} reached the parameter server: {outcomes}")
            pushed = self.push(probe, ps_ip, 2222)
            print(f"{probe[1]}/{probe[0]} pushes to ps 0: {pushed}")
            self.assertTrue(pushed.startswith("unreachable: "), pushed)
        self.assertNotEqual(self.connect(stranger, ps_ip, 9095), "connected", "metrics from a stranger")
        self.assertEqual(wait_until("metrics from the named namespace", lambda: self.connect(
            prometheus, ps_ip, 9095) == "connected" and "connected", timeout=30), "connected")
        self.assertNotEqual(self.connect(prometheus, ps_ip, 2222), "connected", "the ps port from monitoring")

        final = wait_until("the job to finish", lambda: (j := get_json("dtr", "fenced", "-n", self.ns)).get(
            "status", {}).get("state") in ("Succeeded", "Failed") and j, timeout=600)
        self.assertEqual(final["status"]["state"], "Succeeded", json.dumps(final["status"])[:2000])
        print(f"result: {final['status']['result']}")
        self.assertGreaterEqual(final["status"]["result"]["trainAccuracy"], 0.84)  # 0.874 here

    def test_without_the_policy_the_stranger_connects(self):
        job = {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "open"},
               "spec": {"replicaSpecs": {"PS": trainer_role(1, ["--steps=100000"]),
                                         "Worker": trainer_role(1, ["--steps=100000"])}}}
        apply(job, self.ns)
        ps = wait_until("ps 0 running", lambda: (p := get_json("pod", "open-ps-0", "-n", self.ns))["status"].get(
            "phase") == "Running" and p.get("status", {}).get("podIP") and p, timeout=180)
        stranger = self.probe_pod("stranger", self.other)
        self.assertNotEqual(self.connect(stranger, ps["status"]["podIP"], 2222), "connected")
        kubectl("delete", "networkpolicy", "open", "-n", self.ns)
        self.assertEqual(wait_until("the stranger to connect once the policy is gone", lambda: self.connect(
            stranger, ps["status"]["podIP"], 2222) == "connected" and "connected", timeout=60), "connected")
        pushed = self.push(stranger, ps["status"]["podIP"], 2222)
        print(f"without the policy, the stranger's push: {pushed}")
        self.assertTrue(pushed.startswith("reached: "), pushed)


    def shared_claim(self, name):
        """A PersistentVolumeClaim on a directory of the real node (a PV of type hostPath, bound to the
        claim): restricted forbids hostPath volumes in pods, not claims."""
        path = tempfile.mkdtemp(prefix="disttrain-model-", dir=os.path.join(ROOT, "build"))
        os.chmod(path, 0o777)  # the images run as 65532
        pv = f"{self.ns}-{name}"
        apply({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
               "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
                        "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": path, "type": "Directory"},
                        "claimRef": {"namespace": self.ns, "name": name}}})
        self.addCleanup(kubectl, "delete", "pv", pv, "--wait=false", check=False)
        self.addCleanup(shutil.rmtree, path, True)
        apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
               "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": pv,
                        "resources": {"requests": {"storage": "1Gi"}}}}, self.ns)
        return name

    def test_tensorflows_example_succeeds_under_restricted_with_a_read_only_root(self):
        # Real TensorFlow's ParameterServerStrategy (examples/tensorflow/train.py), as restricted and
        # readOnlyRootFilesystem allow it: HOME on an emptyDir, and the checkpoints, which every
        # parameter server writes its shard of, on a shared claim.
        claim = self.shared_claim("model")

        def role(n, policy):
            spec = trainer_role(n, [])["template"]["spec"]
            container = spec["containers"][0]
            container["image"] = realnode.TF_EXAMPLE_IMAGE
            container["args"] = ["--model-dir=/model", "--epochs=2", "--steps-per-epoch=300"]
            container.pop("ports")
            container["volumeMounts"].append({"name": "model", "mountPath": "/model"})
            spec["volumes"].append({"name": "model", "persistentVolumeClaim": {"claimName": claim}})
            return {"replicas": n, "restartPolicy": policy, "template": {"spec": spec}}
        apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "tf"},
               # The chief OnFailure: TensorFlow exits 1 on any UnavailableError, as for a name
               # lookup that timed out under load ("Temporary failure in name resolution", seen
               # once in a full make test); ExitCode would count that exit as permanent.
               "spec": {"replicaSpecs": {"Chief": role(1, "OnFailure"), "PS": role(2, "OnFailure"),
                                         "Worker": role(2, "OnFailure")}}}, self.ns)
        final = wait_until("the TensorFlow job to finish", lambda: (j := get_json("dtr", "tf", "-n", self.ns)).get(
            "status", {}).get("state") in ("Succeeded", "Failed") and j, timeout=900)
        chief_log = kubectl("logs", "-n", self.ns, "tf-chief-0", check=False).stdout
        self.assertEqual(final["status"]["state"], "Succeeded", chief_log[-3000:])
        done = [json.loads(l) for l in chief_log.splitlines() if l.startswith("{") and '"done"' in l]
        self.assertTrue(done, chief_log[-2000:])
        print(f"TensorFlow under restricted, read-only root: accuracy {done[0]['accuracy']:.4f}")
        self.assertGreater(done[0]["accuracy"], 0.6)


if __name__ == "__main__":
    unittest.main()
