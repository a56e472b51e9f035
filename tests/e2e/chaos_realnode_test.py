"""A DistributedTraining under the chaos schedule (tests/e2e/chaos.py) on the real node: ps 1
SIGKILLed, worker 1 killed by the kernel for memory, the job evicted by Kueue and admitted again.
The job succeeds with every step it was asked for; ps 1 is restored from the chief's copy, not a
checkpoint; worker 1 comes back with twice its memory (oomPolicy), no restart counted; the
eviction loses no step (the chief checkpoints on SIGTERM). Prints the schedule's figures (goodput,
time to recover from each fault): `make bench-chaos` runs the same against the training-operator.

Run as a script: without a real node it exits 77, which ctest reports as not run."""
import json
import sys
import unittest

import chaos
import realnode
from crd_test import install_crd
from kube import Namespace, apply, get_json
from kueue_process import remove_after_namespace, start_with_operator, stop_with_operator
from realnode_test import shared_dir

KUEUE = OPERATOR = None


def setUpModule():
    global KUEUE, OPERATOR
    realnode.exit_unless_up()
    install_crd()
    KUEUE, OPERATOR = start_with_operator("kueue-chaos", "chaos-operator")


def tearDownModule():
    code = stop_with_operator(KUEUE, OPERATOR)
    assert code == 0, f"operator exited {code} on SIGTERM"


def queue(ns, name):
    """A ClusterQueue with room for the job (cpu and memory, both of which its pods request), and
    a LocalQueue `lq` in ns; returns the cluster-scoped objects to delete."""
    apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": {}})
    apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name},
           "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
               {"name": name, "resources": [{"name": "cpu", "nominalQuota": "4"},
                                            {"name": "memory", "nominalQuota": "16Gi"}]}]}]}})
    apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
           "spec": {"clusterQueue": name}}, ns)
    return [("clusterqueue", name), ("resourceflavor", name)]


class ChaosRealNodeTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("chaos")
        self.ns = self.ns_ctx.__enter__()
        self.objects = queue(self.ns, f"chaos-{self.ns.rsplit('-', 1)[1]}")

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)
        remove_after_namespace(self.ns, self.objects)

    def test_a_job_under_the_chaos_schedule_keeps_its_steps_and_succeeds(self):
        apply(chaos.distributed_training("chaos", shared_dir(), queue="lq"), self.ns)
        figures = chaos.run(chaos.Target(self.ns, "chaos", "dtr"))
        shown = {k: v for k, v in figures.items() if k != "chief_log"}
        print(f"\nchaos schedule, ours: {json.dumps(shown)}", file=sys.stderr)
        status = get_json("dtr", "chaos", "-n", self.ns)["status"]
        self.assertEqual(figures["outcome"], "Succeeded", json.dumps(status, indent=1))
        # Asynchronous steps in flight at the end may land past the target.
        self.assertGreaterEqual(figures["steps_kept"], chaos.STEPS)
        faults = figures["faults"]
        # ps 1: from the chief's copy (the trainer without it restores the checkpoint of step 0
        # or 1000, --checkpoint-steps, and the job redoes every step since).
        self.assertEqual(faults["ps-sigkill"]["source"], "copy", figures["restores"])
        # The replicas' pushes to the killed ps did not keep them waiting for gRPC to let go of
        # their gradient (30 s on a dead connection: 3 of 4 runs here before PsClient left it).
        self.assertNotIn("gRPC still holds the gradient", figures["chief_log"])
        # worker 1: recreated by the operator with twice its memory, the kill not counted.
        oom = faults["worker-oom"]
        self.assertEqual((oom["recreated"], oom["memory_before"], oom["memory_after"]), (True, "512Mi", "1Gi"))
        worker = status["replicaStatuses"]["Worker"]
        self.assertEqual([(r["index"], r["memory"], r["oomKills"]) for r in worker.get("resized", [])],
                         [(1, "1Gi", 1)])
        self.assertEqual(worker.get("restarts", 0), 0, "an OOM kill under oomPolicy is no restart")
        events = get_json("events", "-n", self.ns, "--field-selector",
                          "involvedObject.name=chaos,reason=MemoryIncreased")["items"]
        self.assertIn("chaos-worker-1 was OOMKilled with 512Mi of memory", events[0]["message"])
        # The eviction: the chief checkpointed on SIGTERM and its successor restored that step.
        self.assertEqual(faults["evict"]["steps_lost"], 0, figures["restores"])
        self.assertGreater(figures["steps_computed"], 0)


if __name__ == "__main__":
    unittest.main()
