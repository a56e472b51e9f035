"""Proves the local control plane behaves as the other e2e suites rely on.

Simulated GPU nodes are Ready; pods are scheduled and run; the test annotations terminate a pod's
containers with the requested exit code; deletion is graceful and completes; the garbage
collector removes objects whose owner is gone.
"""
import unittest

from kube import Namespace, apply, get_json, kubectl, wait_until


def pod(name, annotations=None):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "main", "image": "registry.example/trainer:1"}]},
    }


class ClusterSmokeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ns_ctx = Namespace("smoke")
        cls.ns = cls.ns_ctx.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.ns_ctx.__exit__(None, None, None)

    def phase(self, name):
        return get_json("pod", name, "-n", self.ns)["status"].get("phase")

    def test_nodes_are_ready_and_advertise_gpus(self):
        nodes = get_json("nodes", "-l", "type=kwok")["items"]
        self.assertGreaterEqual(len(nodes), 4)
        for node in nodes:
            ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
            self.assertEqual(ready[0]["status"], "True", node["metadata"]["name"])
            self.assertEqual(node["status"]["capacity"]["nvidia.com/gpu"], "8")
            self.assertEqual(node["status"]["allocatable"]["nvidia.com/gpu"], "8")

    def test_pod_annotated_with_exit_code_3_fails_with_exit_code_3(self):
        apply(pod("exit-3", {"test.disttrain.io/exit-code": "3"}), self.ns)
        wait_until("pod exit-3 to fail", lambda: self.phase("exit-3") == "Failed", timeout=30)
        status = get_json("pod", "exit-3", "-n", self.ns)["status"]
        terminated = status["containerStatuses"][0]["state"]["terminated"]
        self.assertEqual(terminated["exitCode"], 3)
        self.assertEqual(terminated["reason"], "Error")

    def test_pod_annotated_with_exit_code_0_succeeds(self):
        apply(pod("exit-0", {"test.disttrain.io/exit-code": "0"}), self.ns)
        wait_until("pod exit-0 to succeed", lambda: self.phase("exit-0") == "Succeeded", timeout=30)
        terminated = get_json("pod", "exit-0", "-n", self.ns)["status"]["containerStatuses"][0][
            "state"]["terminated"]
        self.assertEqual(terminated["exitCode"], 0)
        self.assertEqual(terminated["reason"], "Completed")

    def test_run_seconds_delays_the_exit(self):
        apply(pod("slow", {"test.disttrain.io/exit-code": "0", "test.disttrain.io/run-seconds": "4"}),
              self.ns)
        wait_until("pod slow to run", lambda: self.phase("slow") == "Running", timeout=30)
        status = get_json("pod", "slow", "-n", self.ns)["status"]
        self.assertIn("running", status["containerStatuses"][0]["state"])
        wait_until("pod slow to succeed", lambda: self.phase("slow") == "Succeeded", timeout=30)

    def test_pod_without_annotation_runs_until_deleted(self):
        apply(pod("forever"), self.ns)
        wait_until("pod forever to run", lambda: self.phase("forever") == "Running", timeout=30)
        self.assertTrue(get_json("pod", "forever", "-n", self.ns)["spec"]["nodeName"])
        kubectl("delete", "pod", "forever", "-n", self.ns, "--wait=true", timeout=60)
        result = kubectl("get", "pod", "forever", "-n", self.ns, check=False)
        self.assertIn("NotFound", result.stderr)

    def test_garbage_collector_removes_dependents_of_a_deleted_owner(self):
        apply(pod("owner"), self.ns)
        uid = get_json("pod", "owner", "-n", self.ns)["metadata"]["uid"]
        apply({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "dependent", "ownerReferences": [
                   {"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": uid}]}}, self.ns)
        kubectl("delete", "pod", "owner", "-n", self.ns, "--wait=true", timeout=60)
        wait_until("the garbage collector to delete configmap dependent",
                   lambda: "NotFound" in kubectl("get", "configmap", "dependent", "-n", self.ns,
                                                 check=False).stderr, timeout=60)


if __name__ == "__main__":
    unittest.main()
