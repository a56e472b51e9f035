"""kube-scheduler's own gang scheduling (Kubernetes 1.36's Workload API) honours a job's gang.

The operator runs with --gang-scheduler=kubernetes: a job with a schedulingPolicy gets a
scheduling.k8s.io/v1alpha2 Workload and PodGroup before its pods, and each pod names the PodGroup
in spec.schedulingGroup. The local control plane serves the API with the GenericWorkload and
GangScheduling feature gates (tests/cluster/cluster-up.sh), so the real kube-scheduler decides.

On two simulated nodes with 8 GPUs each, three workers of 8 GPUs cannot all run: without a gang
the scheduler binds two of them (the control), with one it binds none, and all three once a third
node brings room.
"""
import json
import sys
import unittest

from crd_test import install_crd
from kube import Namespace, apply, get_json, kubectl, wait_until
from operator_process import OperatorProcess

OPERATOR = None
POOL = "disttrain.io/test-pool"


def setUpModule():
    global OPERATOR
    install_crd()
    OPERATOR = OperatorProcess("gang", "--gang-scheduler", "kubernetes").start()


def tearDownModule():
    code = OPERATOR.stop()
    assert code == 0, f"operator exited {code} on SIGTERM"


def gpu_node(name):
    gpus = {"cpu": "8", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"kubernetes.io/hostname": name, "type": "kwok", POOL: "gang"}},
            "status": {"allocatable": gpus, "capacity": gpus}}


def gpu_job(name, workers, gang):
    template = {"spec": {"nodeSelector": {POOL: "gang"},
                         "containers": [{"name": "tensorflow", "image": "registry.example/trainer:1",
                                         "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}
    job = {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": name},
           "spec": {"replicaSpecs": {"Worker": {"replicas": workers, "template": template}}}}
    if gang:
        job["spec"]["runPolicy"] = {"schedulingPolicy": {}}
    return job


class GangTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("gang")
        self.ns = self.ns_ctx.__enter__()
        self.nodes = []
        self.add_nodes("gang-node-0", "gang-node-1")

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)
        for node in self.nodes:
            kubectl("delete", "node", node, "--ignore-not-found", "--wait=false")

    def add_nodes(self, *names):
        for name in names:
            kubectl("apply", "-f", "-", input=json.dumps(gpu_node(name)))
            self.nodes.append(name)
        kubectl("wait", "--for=condition=Ready", *[f"node/{n}" for n in names], "--timeout=60s")

    def pods(self, job):
        return get_json("pods", "-n", self.ns, "-l", f"disttrain.io/job-name={job}")["items"]

    def bound(self, job):
        return [p for p in self.pods(job) if p["spec"].get("nodeName")]

    def unschedulable(self, pod):
        return any(c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable"
                   for c in pod.get("status", {}).get("conditions", []))

    def pod_group_condition(self, name):
        group = get_json("podgroups.scheduling.k8s.io", name, "-n", self.ns)
        for c in group.get("status", {}).get("conditions", []):
            if c["type"] == "PodGroupScheduled":
                return c
        return None

    def test_a_gang_that_does_not_fit_binds_no_pod_until_room_appears(self):
        # The control: without a gang the scheduler binds what fits, two of the three.
        apply(gpu_job("loose", 3, gang=False), self.ns)
        wait_until("two workers bound and one unschedulable", lambda: len(self.bound("loose")) == 2 and any(
            self.unschedulable(p) for p in self.pods("loose")), timeout=60)
        kubectl("delete", "dtr", "loose", "-n", self.ns, "--wait=true")
        wait_until("the control's pods to be gone", lambda: not self.pods("loose"), timeout=60)

        apply(gpu_job("gang", 3, gang=True), self.ns)
        workload = wait_until("the Workload", lambda: get_json("workloads.scheduling.k8s.io", "gang", "-n", self.ns))
        self.assertEqual([(t["name"], t["schedulingPolicy"]) for t in workload["spec"]["podGroupTemplates"]],
                         [("gang", {"gang": {"minCount": 3}})])
        self.assertEqual(workload["metadata"]["ownerReferences"][0]["kind"], "DistributedTraining")
        wait_until("three pods naming the PodGroup", lambda: [
            p["spec"].get("schedulingGroup") for p in self.pods("gang")] == [{"podGroupName": "gang"}] * 3)
        condition = wait_until("the scheduler to find the gang unschedulable",
                               lambda: (self.pod_group_condition("gang") or {}).get("status") == "False"
                               and self.pod_group_condition("gang"), timeout=90)
        self.assertEqual(condition["reason"], "Unschedulable")
        self.assertEqual(self.bound("gang"), [], "a gang that does not fit binds no pod, not even two")
        # The job says why it waits: the scheduler's reason and message for its pods.
        waiting = wait_until("the job's Waiting condition", lambda: next(
            (c for c in get_json("dtr", "gang", "-n", self.ns).get("status", {}).get("conditions", [])
             if c["type"] == "Waiting" and c["status"] == "True"), None), timeout=60)
        print(f"\nWaiting: {waiting}", file=sys.stderr)
        self.assertEqual(waiting["reason"], "Unschedulable", waiting)

        self.add_nodes("gang-node-2")
        wait_until("all three bound once room appears", lambda: len(self.bound("gang")) == 3, timeout=120)
        self.assertEqual(len({p["spec"]["nodeName"] for p in self.bound("gang")}), 3)
        wait_until("the job to run", lambda: get_json("dtr", "gang", "-n", self.ns).get("status", {}).get(
            "state") == "Running", timeout=60)
        self.assertEqual(self.pod_group_condition("gang")["status"], "True")
        cleared = next(c for c in get_json("dtr", "gang", "-n", self.ns)["status"]["conditions"] if c["type"] == "Waiting")
        self.assertEqual((cleared["status"], cleared["reason"]), ("False", "NothingHoldsIt"), cleared)

    def test_the_workload_and_podgroup_go_with_the_job(self):
        apply(gpu_job("short", 1, gang=True), self.ns)
        wait_until("the job to run", lambda: get_json("dtr", "short", "-n", self.ns).get("status", {}).get(
            "state") == "Running", timeout=60)
        kubectl("delete", "dtr", "short", "-n", self.ns, "--wait=true")
        for kind in ("podgroups.scheduling.k8s.io", "workloads.scheduling.k8s.io"):
            wait_until(f"the job's {kind} to be gone", lambda kind=kind: "NotFound" in kubectl(
                "get", kind, "short", "-n", self.ns, check=False).stderr, timeout=90)


if __name__ == "__main__":
    unittest.main()
