"""Pod Security admission (built into kube-apiserver) against the pods the operator makes, in a
namespace that enforces the "restricted" profile:

1. A job whose templates meet "restricted" gets every pod created and runs to success: nothing the
   operator adds (TF_CONFIG and device environment, ports, hostname and subdomain, labels, owner
   references) breaks the profile.
2. A template that breaks it is refused by the API server at pod creation; the job says so at once
   (condition ReplicaFailure with the admission message, a FailedCreatePod event), is not marked
   Failed (a relabelled namespace may let it in), and starts as soon as the namespace allows it.
3. Every example that needs no node's own files (no hostPath) renders to pods the profile admits
   (server-side dry run).
Pods run on kwok's simulated nodes, their exits driven by lifecycle_test.role's annotations.
"""
import json
import os
import subprocess
import unittest

from crd_test import install_crd
from kube import BIN, ROOT, Namespace, apply, get_json, kubectl, wait_until
from lifecycle_test import job, role
from operator_process import OperatorProcess

OPERATOR = None
VIOLATION = 'violates PodSecurity "restricted:latest"'
# The examples that mount a directory of the real node (hostPath, which "restricted" and
# "baseline" forbid) are left out: quickstart-real-node.yaml, tensorflow/multi-worker-keras.yaml.
EXAMPLES = ["quickstart.yaml", "async-1ps-2workers.yaml", "sync-chief-2ps-4gpu-workers.yaml",
            "gang-scheduling.yaml", "kueue/queued-job.yaml"]


def setUpModule():
    global OPERATOR
    install_crd()
    OPERATOR = OperatorProcess("pod-security").start()


def tearDownModule():
    assert OPERATOR.stop() == 0


def restricted(spec):
    """A replica spec whose pod template meets the restricted profile."""
    pod = spec["template"]["spec"]
    pod["securityContext"] = {"runAsNonRoot": True, "runAsUser": 65532,
                              "seccompProfile": {"type": "RuntimeDefault"}}
    for c in pod["containers"]:
        c["securityContext"] = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]}}
    return spec


class PodSecurityTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("psa")
        self.ns = self.ns_ctx.__enter__()
        kubectl("label", "namespace", self.ns, "pod-security.kubernetes.io/enforce=restricted",
                "pod-security.kubernetes.io/enforce-version=latest")

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)

    def dtr(self, name):
        return get_json("dtr", name, "-n", self.ns)

    def condition(self, name, ctype):
        for c in self.dtr(name).get("status", {}).get("conditions", []):
            if c["type"] == ctype:
                return c
        return None

    def test_a_restricted_template_stays_restricted_with_what_the_operator_adds(self):
        gpu_worker = restricted(role(2))
        gpu_worker["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
        apply(job("ok", Chief=restricted(role(1, 0, 10)), PS=restricted(role(2)), Worker=gpu_worker,
                  Evaluator=restricted(role(1))), self.ns)
        wait_until("every pod admitted", lambda: len(get_json("pods", "-n", self.ns)["items"]) == 6, timeout=60)
        wait_until("the job to succeed", lambda: self.dtr("ok").get("status", {}).get("state") == "Succeeded",
                   timeout=90)
        self.assertNotEqual((self.condition("ok", "ReplicaFailure") or {}).get("status"), "True")

    def test_a_template_that_breaks_restricted_is_refused_and_the_job_says_why(self):
        apply(job("plain", Chief=role(1, 0, 3), PS=role(1), Worker=role(1)), self.ns)

        def refused():
            c = self.condition("plain", "ReplicaFailure")
            return c if c and c["status"] == "True" else None
        cond = wait_until("ReplicaFailure with the admission's message", refused, timeout=30)
        self.assertEqual(cond["reason"], "FailedCreate")
        self.assertIn(VIOLATION, cond["message"])
        self.assertIn("allowPrivilegeEscalation != false", cond["message"])
        events = get_json("events", "-n", self.ns, "--field-selector",
                          "involvedObject.name=plain,reason=FailedCreatePod")["items"]
        self.assertTrue(events and VIOLATION in events[0]["message"], events)
        self.assertEqual(get_json("pods", "-n", self.ns)["items"], [])
        self.assertNotEqual(self.dtr("plain")["status"].get("state"), "Failed")
        waiting = wait_until("condition Waiting", lambda: (c := self.condition("plain", "Waiting")) and
                             c["status"] == "True" and c, timeout=30)
        self.assertEqual(waiting["reason"], "FailedCreate")
        self.assertIn(VIOLATION, waiting["message"])

        # The namespace relaxes to "baseline", which the template meets: the job starts.
        kubectl("label", "namespace", self.ns, "pod-security.kubernetes.io/enforce=baseline", "--overwrite")
        wait_until("the job to succeed", lambda: self.dtr("plain").get("status", {}).get("state") == "Succeeded",
                   timeout=120)
        self.assertEqual(self.condition("plain", "ReplicaFailure")["status"], "False")
        self.assertEqual(self.condition("plain", "Waiting")["status"], "False")

    def test_every_example_without_host_files_renders_to_pods_restricted_admits(self):
        for example in EXAMPLES:
            with self.subTest(example=example):
                r = subprocess.run([os.path.join(BIN, "disttrain-operator"), "render", "-f",
                                    os.path.join(ROOT, "examples", example), "-o", "json"],
                                   capture_output=True, text=True, check=True)
                pods = [o for o in json.loads(r.stdout)["items"] if o["kind"] == "Pod"]
                self.assertTrue(pods)
                for pod in pods:
                    pod["metadata"]["namespace"] = self.ns
                    pod["metadata"].pop("ownerReferences", None)  # their job is not created here
                    dry = kubectl("apply", "--dry-run=server", "-f", "-", input=json.dumps(pod), check=False)
                    self.assertEqual(dry.returncode, 0, f"{pod['metadata']['name']}: {dry.stderr}")


if __name__ == "__main__":
    unittest.main()
