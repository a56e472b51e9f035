"""kubectl dtr against the local control plane (kwok nodes): found by kubectl on PATH, it reports a
job's pods and conditions, says clearly when a job does not exist or RBAC refuses, and shows why
it cannot read usage on nodes without a kubelet. Logs, top values and the result of real training
are tested on the real node (realnode_test.py)."""
import json
import os
import subprocess
import tempfile
import unittest

from crd_test import install_crd
from kube import BIN, KUBECONFIG, TOOLS, Namespace, apply, get_json, kubectl, wait_until
from lifecycle_test import job, role
from operator_process import OperatorProcess

OPERATOR = None


def setUpModule():
    global OPERATOR
    install_crd()
    OPERATOR = OperatorProcess("plugin").start()


def tearDownModule():
    assert OPERATOR.stop() == 0


def dtr(*args, kubeconfig=KUBECONFIG, input=None):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", KUBECONFIG=kubeconfig)
    return subprocess.run([os.path.join(TOOLS, "kubectl"), "dtr", *args], capture_output=True, text=True,
                          timeout=60, env=env, input=input)


class PluginTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("plugin")
        self.ns = self.ns_ctx.__enter__()

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)

    def test_status_lists_every_pod_by_role_with_the_jobs_conditions(self):
        apply(job("st", Chief=role(1), PS=role(2), Worker=role(1)), self.ns)
        wait_until("the job to run", lambda: get_json("dtr", "st", "-n", self.ns).get("status", {}).get(
            "state") == "Running", timeout=60)
        r = dtr("status", "st", "-n", self.ns)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"Job:        {self.ns}/st\n", r.stdout)
        self.assertIn("State:      Running", r.stdout)
        self.assertIn("Replicas:   Chief 1/1 running   PS 2/2 running   Worker 1/1 running", r.stdout)
        rows = [l.split()[:4] for l in r.stdout.splitlines() if l.startswith("st-")]
        self.assertEqual(rows, [["st-chief-0", "chief", "0", "Running"], ["st-ps-0", "ps", "0", "Running"],
                                ["st-ps-1", "ps", "1", "Running"], ["st-worker-0", "worker", "0", "Running"]])
        self.assertRegex(r.stdout, r"\nRunning +True +PodsRunning ")

        # kwok nodes have no kubelet: top says so per node instead of failing.
        top = dtr("top", "st", "-n", self.ns)
        self.assertEqual(top.returncode, 0, top.stderr)
        self.assertEqual(len([l for l in top.stdout.splitlines() if l.startswith("st-") and "<unknown>" in l]), 4)
        self.assertRegex(top.stdout, r"node kwok-node-\d+: ")

    def test_a_missing_job_is_a_one_line_error(self):
        for command in ("status", "logs", "top"):
            with self.subTest(command=command):
                r = dtr(command, "nope", "-n", self.ns)
                self.assertEqual(r.returncode, 1)
                self.assertEqual(r.stderr, f'Error: distributedtraining "nope" not found in namespace "{self.ns}" '
                                           f'(kubectl get dtr -n {self.ns} lists the jobs there)\n')

    def test_rbac_refusal_names_what_is_missing(self):
        kubectl("create", "serviceaccount", "nobody", "-n", self.ns)
        token = kubectl("create", "token", "nobody", "-n", self.ns).stdout.strip()
        config = json.loads(kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
        config["users"] = [{"name": "nobody", "user": {"token": token}}]
        config["contexts"][0]["context"]["user"] = "nobody"
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(config, f)  # a kubeconfig may be JSON
        try:
            r = dtr("status", "any", "-n", self.ns, kubeconfig=f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("Error: the API server refused: "), r.stderr)
        self.assertIn('cannot get resource "distributedtrainings"', r.stderr)
        self.assertIn(f"kubectl auth can-i get distributedtrainings -n {self.ns}", r.stderr)


if __name__ == "__main__":
    unittest.main()
