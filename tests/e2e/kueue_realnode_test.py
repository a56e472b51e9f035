"""A trainer job preempted by Kueue on the real node resumes from its checkpoint: Kueue (the pinned
upstream manager) evicts the low-priority job for a high-priority one, the operator (--kueue)
stops the low job's chief first (it checkpoints on SIGTERM), then its other pods; no restart is
counted; once the high job succeeded the low job is admitted again, its chief restores from a
global step at least that of its last checkpoint, and it succeeds.

Run as a script: without a real node it exits 77, which ctest reports as not run."""
import unittest

import realnode
from crd_test import install_crd
from kube import Namespace, apply, get_json, wait_until
from kueue_process import remove_after_namespace, start_with_operator, stop_with_operator
from pod_logs import LogFollower
from realnode_test import shared_dir, trainer_template

KUEUE = OPERATOR = None


def setUpModule():
    global KUEUE, OPERATOR
    realnode.exit_unless_up()
    install_crd()
    KUEUE, OPERATOR = start_with_operator("kueue-realnode", "kueue-realnode-operator")


def tearDownModule():
    stop_with_operator(KUEUE, OPERATOR)


def job(name, model_dir, steps, priority, roles=("Chief", "PS", "Worker")):
    args = ["--model=mlp", "--mode=sync", f"--steps={steps}", "--learning-rate=0.1", "--batch-size=64",
            "--checkpoint-steps=250", "--model-dir=/model", "--log-every=100"]
    spec = {}
    for r in roles:
        t = trainer_template(args, model_dir)
        t["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "300m"}}
        spec[r] = {"replicas": 1, "restartPolicy": "OnFailure", "template": t}
    return {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "lq",
                                                  "kueue.x-k8s.io/priority-class": priority}},
            "spec": {"replicaSpecs": spec}}


class KueueRealNodeTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("kueue-real")
        self.ns = self.ns_ctx.__enter__()
        self.id = self.ns.rsplit("-", 1)[1]
        self.objects = []

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)
        remove_after_namespace(self.ns, self.objects)

    def cluster_object(self, obj):
        apply(obj)
        self.objects.append((obj["kind"].lower(), obj["metadata"]["name"]))

    def dtr(self, name):
        return get_json("dtr", name, "-n", self.ns)

    def state(self, name):
        return self.dtr(name).get("status", {}).get("state")

    def test_a_preempted_trainer_resumes_from_its_checkpoint_and_succeeds_without_a_restart(self):
        rf, cq = f"rn-{self.id}", f"rn-{self.id}"
        self.cluster_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                             "metadata": {"name": rf}, "spec": {}})
        # 1 CPU of quota: the low job (3 x 300m) and the high one (2 x 300m) do not fit together.
        self.cluster_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cq},
                             "spec": {"namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
                                      "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                                          {"name": rf, "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}})
        apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
               "spec": {"clusterQueue": cq}}, self.ns)
        for name, value in (("low", 100), ("high", 1000)):
            self.cluster_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                                 "metadata": {"name": f"{name}-{self.id}"}, "value": value})
        apply(job("low", shared_dir(), 2000, f"low-{self.id}"), self.ns)
        wait_until("low's chief to run", lambda: get_json("pod", "low-chief-0", "-n", self.ns)["status"].get(
            "phase") == "Running", timeout=180)
        first = LogFollower(self.ns, "low-chief-0")
        try:
            wait_until("a checkpoint at step 500", lambda: any(
                e["global_step"] >= 500 for e in realnode.events_in(first.text(), "checkpoint")), timeout=300)
            apply(job("high", shared_dir(), 300, f"high-{self.id}", roles=("Chief", "PS")), self.ns)
            wait_until("low's pods gone", lambda: not get_json("pods", "-n", self.ns, "-l",
                                                               "disttrain.io/job-name=low")["items"], timeout=90)
        finally:
            first.stop()
        saved = max(e["global_step"] for e in realnode.events_in(first.text(), "checkpoint"))
        self.assertIn("stopping on SIGTERM", first.text())
        queued = [c for c in self.dtr("low")["status"]["conditions"] if c["type"] == "Queued"][0]
        self.assertEqual((queued["status"], queued["reason"]), ("True", "Preempted"))
        wait_until("high to succeed", lambda: self.state("high") == "Succeeded", timeout=300)
        wait_until("low's chief to run again", lambda: get_json("pods", "-n", self.ns, "-l",
                                                                "disttrain.io/job-name=low,disttrain.io/replica-type=chief")[
            "items"] and get_json("pod", "low-chief-0", "-n", self.ns)["status"].get("phase") == "Running", timeout=180)
        second = LogFollower(self.ns, "low-chief-0")
        try:
            wait_until("low to finish", lambda: self.state("low") in ("Succeeded", "Failed"), timeout=600)
            wait_until("the chief's log", lambda: realnode.events_in(second.text(), "done"), timeout=60)
        finally:
            second.stop()
        self.assertEqual(self.state("low"), "Succeeded")
        restores = realnode.events_in(second.text(), "restore")
        self.assertTrue(restores, second.text()[-2000:])
        print(f"preempted after a checkpoint at step {saved}; resumed from step {restores[0]['global_step']}")
        self.assertGreaterEqual(restores[0]["global_step"], saved)
        restarts = sum(r.get("restarts", 0) for r in self.dtr("low")["status"]["replicaStatuses"].values())
        self.assertEqual(restarts, 0, "an eviction is no restart")


if __name__ == "__main__":
    unittest.main()
