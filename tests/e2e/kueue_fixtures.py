"""What the Kueue suites share (kueue_test.py): job and queue builders, a pod watch that keeps
the GPUs held at every moment, and a test case with a namespace of its own and reads of the
jobs, pods, Workloads and events in it."""
import json
import os
import subprocess
import threading
import time
import unittest
import uuid

from kube import KUBECONFIG, TOOLS, Namespace, apply, get_json, job_events, kubectl, wait_job_event, wait_until
from lifecycle_test import role

GPU = "nvidia.com/gpu"


def gpu_role(replicas, gpus, exit_code=None, run_seconds=None, grace=None):
    spec = role(replicas, exit_code, run_seconds)
    c = spec["template"]["spec"]["containers"][0]
    c["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {}}
    if gpus:
        c["resources"]["requests"][GPU] = str(gpus)
        c["resources"]["limits"][GPU] = str(gpus)
    if grace is not None:
        spec["template"]["spec"]["terminationGracePeriodSeconds"] = grace
    return spec


def queued(j, queue, priority=None):
    j["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    if priority:
        j["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = priority
    return j


def cluster_queue(name, flavors, gpus, preemption=None):
    """A ClusterQueue with `gpus` GPUs per flavour (a list, in order) and room for CPU/memory."""
    spec = {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": ["cpu", "memory", GPU],
        "flavors": [{"name": f, "resources": [
            {"name": "cpu", "nominalQuota": "200"}, {"name": "memory", "nominalQuota": "1000Gi"},
            {"name": GPU, "nominalQuota": str(g)}]} for f, g in zip(flavors, gpus)]}]}
    if preemption:
        spec["preemption"] = preemption
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def flavor(name, kind=None):
    spec = {}
    if kind:
        spec["nodeLabels"] = {"disttrain.io/gpu-kind": kind}
        if kind == "b":
            spec["tolerations"] = [{"key": "disttrain.io/gpu-kind", "operator": "Equal", "value": "b",
                                    "effect": "NoSchedule"}]
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


class JobWatch:
    """Follows every DistributedTraining of a namespace through `kubectl get -w` and keeps, per
    job, the first time it was seen Queued (its state Queued and its Queued condition True): a
    record that does not depend on a poll coming before the job moves on."""

    def __init__(self, ns):
        self.first_queued = {}  # job -> monotonic time
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(
            [os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "dtr", "-n", ns, "-w",
             "--output-watch-events", "-o", "json"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self):
        decoder, buf = json.JSONDecoder(), ""
        for line in self.proc.stdout:
            buf += line
            while buf.strip():
                try:
                    event, end = decoder.raw_decode(buf.lstrip())
                except json.JSONDecodeError:
                    break
                buf = buf.lstrip()[end:]
                job = event["object"]
                status = job.get("status", {})
                queued = any(c["type"] == "Queued" and c["status"] == "True" for c in status.get("conditions", []))
                if status.get("state") == "Queued" and queued:
                    with self.lock:
                        self.first_queued.setdefault(job["metadata"]["name"], time.monotonic())

    def queued_at(self, name):
        with self.lock:
            return self.first_queued.get(name)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class PodWatch:
    """Follows every pod of a namespace through `kubectl get -w` (a real watch) and keeps, per
    event, the GPUs requested by the pods that exist and have not ended (terminating included)."""

    def __init__(self, ns):
        self.ns = ns
        self.live = {}        # pod name -> (job, gpus)
        self.max_gpus = 0
        self.first_seen = {}  # job -> monotonic time its first pod appeared
        self.gone = {}        # pod name -> monotonic time it was deleted
        self.gone_wall = {}   # pod name -> wall-clock time it was deleted
        self.seen = set()     # every pod name seen
        self.uids = {}        # pod name -> every UID seen under that name (a pod made again)
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(
            [os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "pods", "-n", ns, "-w",
             "--output-watch-events", "-o", "json"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self):
        decoder, buf = json.JSONDecoder(), ""
        for line in self.proc.stdout:
            buf += line
            while buf.strip():
                try:
                    event, end = decoder.raw_decode(buf.lstrip())
                except json.JSONDecodeError:
                    break
                buf = buf.lstrip()[end:]
                self._apply(event)

    def _apply(self, event):
        pod = event["object"]
        name = pod["metadata"]["name"]
        job = pod["metadata"].get("labels", {}).get("disttrain.io/job-name", "")
        gpus = sum(int(c.get("resources", {}).get("requests", {}).get(GPU, "0"))
                   for c in pod["spec"]["containers"])
        ended = pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
        with self.lock:
            self.first_seen.setdefault(job, time.monotonic())
            self.seen.add(name)
            self.uids.setdefault(name, set()).add(pod["metadata"]["uid"])
            if event["type"] == "DELETED":
                self.live.pop(name, None)
                self.gone[name] = time.monotonic()
                self.gone_wall[name] = time.time()
            elif ended:
                self.live.pop(name, None)
            else:
                self.live[name] = (job, gpus)
            self.max_gpus = max(self.max_gpus, sum(g for _, g in self.live.values()))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class KueueCase(unittest.TestCase):
    """A namespace per test, the cluster objects it makes deleted after it, and reads of its
    jobs, pods, Workloads and events."""

    def setUp(self):
        self.id = uuid.uuid4().hex[:5]
        self.ns_ctx = Namespace("kueue")
        self.ns = self.ns_ctx.__enter__()
        self.cluster_objects = []

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)
        # Gone while the operator runs: its Workloads' Kueue finalizer is the operator's to remove,
        # and a namespace left Terminating would hold up the suites that wait for none.
        wait_until(f"namespace {self.ns} to be gone", lambda: kubectl(
            "get", "namespace", self.ns, check=False).returncode != 0, timeout=120)
        for kind, name in reversed(self.cluster_objects):
            kubectl("delete", kind, name, "--ignore-not-found", "--wait=false", check=False)

    # --- helpers -------------------------------------------------------------------------------
    def cluster_object(self, obj):
        apply(obj)
        self.cluster_objects.append((obj["kind"].lower(), obj["metadata"]["name"]))

    def queue_setup(self, gpus, flavors=None, preemption=None):
        """ResourceFlavor(s), a ClusterQueue and the LocalQueue "lq" in the test's namespace."""
        flavors = flavors or [flavor(f"default-{self.id}")]
        for f in flavors:
            self.cluster_object(f)
        cq = f"cq-{self.id}"
        self.cluster_object(cluster_queue(cq, [f["metadata"]["name"] for f in flavors],
                                          gpus if isinstance(gpus, list) else [gpus], preemption))
        apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
               "metadata": {"name": "lq"}, "spec": {"clusterQueue": cq}}, self.ns)
        wait_until("the ClusterQueue to be active", lambda: any(
            c["type"] == "Active" and c["status"] == "True"
            for c in get_json("clusterqueue", cq).get("status", {}).get("conditions", [])), timeout=30)
        return cq

    def priority_class(self, name, value):
        self.cluster_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                             "metadata": {"name": name}, "value": value})

    def job(self, name):
        return get_json("distributedtraining", name, "-n", self.ns)

    def condition(self, name, ctype):
        for c in self.job(name).get("status", {}).get("conditions", []):
            if c["type"] == ctype:
                return c
        return None

    def state(self, name):
        return self.job(name).get("status", {}).get("state")

    def wait_state(self, name, state, timeout=60):
        return wait_until(f"job {name} to be {state}", lambda: self.state(name) == state and self.job(name),
                          timeout=timeout)

    def pods(self, name):
        return get_json("pods", "-n", self.ns, "-l", f"disttrain.io/job-name={name}")["items"]

    def workload(self, name):
        items = get_json("workloads.kueue.x-k8s.io", "-n", self.ns, "-l", f"disttrain.io/job-name={name}")["items"]
        return items[0] if items else None

    def wl_condition(self, wl, ctype):
        for c in (wl or {}).get("status", {}).get("conditions", []):
            if c["type"] == ctype:
                return c
        return None

    def events(self, name):
        return job_events(self.ns, name)

    def wait_event(self, name, reason, count=1, timeout=30):
        return wait_job_event(self.ns, name, reason, count, timeout)

    def restarts(self, name):
        return sum(r.get("restarts", 0) for r in self.job(name).get("status", {}).get("replicaStatuses", {}).values())
