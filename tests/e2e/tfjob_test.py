"""Kubeflow TFJobs run by disttrain-operator --tfjob, driven by clients the project did not write.

The Kubeflow training SDK (`kubeflow-training`, pinned in tests/python/requirements.txt) creates
TFJobs from its own models and waits on their conditions; kubectl checks what the pods, Services
and status look like to the training-operator's users (labels, names, TF_CONFIG, replicaStatuses,
the State column); our TFJob CRD refuses what the training-operator's webhook refused. Pods run on
kwok's simulated nodes, their exits driven by the stage annotations of lifecycle_test.role.
"""
import json
import os
import subprocess
import tempfile
import time
import unittest

from kubeflow.training import TrainingClient, models
from kubeflow.training.utils.utils import FakeResponse
from kubernetes import client as k8s

from crd_test import install_crd
from kube import KUBECONFIG, ROOT, TOOLS, Namespace, get_json, kubectl, wait_established, wait_until
from plugin_test import dtr
from lifecycle_test import role
from operator_process import OperatorProcess

OPERATOR = None
TFJOB_CRD = os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml")


def setUpModule():
    global OPERATOR
    install_crd()  # the operator serves DistributedTrainings too: its readiness waits for their cache
    kubectl("apply", "--server-side", "--force-conflicts", "-f", TFJOB_CRD)
    wait_established("crd/tfjobs.kubeflow.org", timeout=30)
    OPERATOR = OperatorProcess("tfjob", "--tfjob", "--workers", "4").start()


def tearDownModule():
    code = OPERATOR.stop()
    assert code == 0, f"operator exited {code} on SIGTERM"


def replica(replicas, exit_code=None, run_seconds=None, restart_policy=None):
    """A TFJob replica spec as the SDK's models hold it."""
    spec = role(replicas, exit_code, run_seconds, restart_policy)
    t = spec["template"]
    return models.KubeflowOrgV1ReplicaSpec(
        replicas=replicas, restart_policy=restart_policy,
        template=k8s.V1PodTemplateSpec(
            metadata=k8s.V1ObjectMeta(annotations=t["metadata"]["annotations"]),
            spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="tensorflow", image="registry.example/tf:1")])))


def tfjob(name, run_policy=None, **replicas):
    return models.KubeflowOrgV1TFJob(
        api_version="kubeflow.org/v1", kind="TFJob", metadata=k8s.V1ObjectMeta(name=name),
        spec=models.KubeflowOrgV1TFJobSpec(run_policy=run_policy or models.KubeflowOrgV1RunPolicy(),
                                           tf_replica_specs=replicas))


def manifest(name, replicas, run_policy=None):
    """A TFJob as a plain manifest (what kubectl applies)."""
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"runPolicy": run_policy or {}, "tfReplicaSpecs": replicas}}


class TfJobTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("tfjob")
        self.ns = self.ns_ctx.__enter__()
        self.sdk = TrainingClient(config_file=KUBECONFIG, namespace=self.ns, job_kind="TFJob")

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)

    def tfjob(self, name):
        return get_json("tfjob", name, "-n", self.ns)

    def pods(self, name, selector=""):
        sel = f"training.kubeflow.org/job-name={name}" + (f",{selector}" if selector else "")
        return get_json("pods", "-n", self.ns, "-l", sel)["items"]

    def test_the_sdk_runs_a_tfjob_to_success_with_tfjobs_names_labels_and_status(self):
        self.sdk.create_job(job=tfjob("mnist", Chief=replica(1, 0, 4), PS=replica(1), Worker=replica(2)))
        job = self.sdk.wait_for_job_conditions("mnist", expected_conditions={"Running"},
                                               wait_timeout=60, polling_interval=1)
        self.assertTrue(self.sdk.is_job_running("mnist"))
        self.assertEqual(sorted(self.sdk.get_job_pod_names("mnist")),
                         ["mnist-chief-0", "mnist-ps-0", "mnist-worker-0", "mnist-worker-1"])
        self.assertEqual(self.sdk.get_job_pod_names("mnist", is_master=True), ["mnist-chief-0"])
        self.assertEqual(self.sdk.get_job_pod_names("mnist", replica_type="worker", replica_index=1),
                         ["mnist-worker-1"])

        worker = get_json("pod", "mnist-worker-1", "-n", self.ns)
        labels = worker["metadata"]["labels"]
        self.assertEqual({k: v for k, v in labels.items() if k.startswith("training.kubeflow.org/")},
                         {"training.kubeflow.org/job-name": "mnist",
                          "training.kubeflow.org/operator-name": "tfjob-controller",
                          "training.kubeflow.org/replica-type": "worker",
                          "training.kubeflow.org/replica-index": "1"})
        owner = worker["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["apiVersion"], owner["kind"], owner["name"], owner["controller"]),
                         ("kubeflow.org/v1", "TFJob", "mnist", True))
        env = {e["name"]: e.get("value") for e in worker["spec"]["containers"][0]["env"]}
        hosts = lambda role, n: [f"mnist-{role}-{i}.{self.ns}.svc:2222" for i in range(n)]
        self.assertEqual(json.loads(env["TF_CONFIG"]),
                         {"cluster": {"chief": hosts("chief", 1), "ps": hosts("ps", 1), "worker": hosts("worker", 2)},
                          "task": {"type": "worker", "index": 1}, "environment": "cloud"})
        svc = get_json("service", "mnist-ps-0", "-n", self.ns)
        self.assertEqual(svc["spec"]["clusterIP"], "None")
        self.assertEqual([p["name"] for p in svc["spec"]["ports"]], ["tfjob-port"])
        self.assertEqual(svc["metadata"]["ownerReferences"][0]["kind"], "TFJob")

        job = self.sdk.wait_for_job_conditions("mnist", wait_timeout=60, polling_interval=1)
        self.assertTrue(self.sdk.is_job_succeeded("mnist"))
        status = self.tfjob("mnist")["status"]
        types = [(c["type"], c["status"], c["reason"]) for c in status["conditions"]]
        self.assertIn(("Created", "True", "TFJobCreated"), types)
        self.assertIn(("Running", "False", "TFJobRunning"), types)
        self.assertEqual(types[-1], ("Succeeded", "True", "TFJobSucceeded"), "kubectl's State column reads the last")
        self.assertEqual(status["replicaStatuses"]["Chief"]["succeeded"], 1)
        self.assertIn("startTime", status)
        self.assertIn("completionTime", status)
        self.assertIn("lastReconcileTime", status)
        self.assertIsNotNone(job.status.completion_time, "the SDK's model reads the status")
        state = kubectl("get", "tfjob", "mnist", "-n", self.ns, "--no-headers").stdout.split()[1]
        self.assertEqual(state, "Succeeded")
        # TFJob's default cleanPodPolicy is None: every pod is left as it is.
        self.assertEqual(len([p for p in self.pods("mnist") if not p["metadata"].get("deletionTimestamp")]), 4)

    def test_clean_pod_policy_running_tears_the_parameter_servers_down(self):
        kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(manifest(
            "clean", {"Worker": role(1, 0, 3), "PS": role(2)}, {"cleanPodPolicy": "Running"})))
        self.sdk.wait_for_job_conditions("clean", wait_timeout=60, polling_interval=1)
        # Worker 0 decides without a chief and carries job-role=master.
        self.assertEqual(self.sdk.get_job_pod_names("clean", is_master=True), ["clean-worker-0"])
        wait_until("the ps pods to be gone",
                   lambda: not [p for p in self.pods("clean", "training.kubeflow.org/replica-type=ps")
                                if not p["metadata"].get("deletionTimestamp")], timeout=30)

    def test_a_failing_tfjob_is_failed_for_the_sdk(self):
        self.sdk.create_job(job=tfjob("boom", Worker=replica(2, 3, 2)))
        with self.assertRaisesRegex(RuntimeError, "is Failed"):
            self.sdk.wait_for_job_conditions("boom", wait_timeout=60, polling_interval=1)
        self.assertTrue(self.sdk.is_job_failed("boom"))
        last = self.tfjob("boom")["status"]["conditions"][-1]
        self.assertEqual((last["type"], last["reason"]), ("Failed", "TFJobFailed"))
        self.assertIn("exited with code 3", last["message"])

    def test_a_retryable_exit_restarts_the_replica_until_the_backoff_limit(self):
        # ExitCode: 137 (killed) is retryable, so the worker is recreated, twice, then the job fails.
        # Restarting lasts until the new pod runs (well under a second on kwok), too short to catch
        # by polling: every version of the job is watched, and the SDK reads each one.
        with tempfile.TemporaryFile("w+") as out:
            watch = subprocess.Popen([os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "tfjobs",
                                      "-n", self.ns, "--watch", "-o", "json"], stdout=out, stderr=subprocess.DEVNULL,
                                     text=True)
            try:
                self.sdk.create_job(job=tfjob(
                    "flaky", models.KubeflowOrgV1RunPolicy(backoff_limit=2),
                    Worker=replica(1, 137, 2, restart_policy="ExitCode"), PS=replica(1)))
                with self.assertRaisesRegex(RuntimeError, "is Failed"):
                    self.sdk.wait_for_job_conditions("flaky", wait_timeout=60, polling_interval=1)
                time.sleep(1)  # the watch prints the last versions
            finally:
                watch.terminate()
                watch.wait()
            out.seek(0)
            text, versions, decoder, at = out.read(), [], json.JSONDecoder(), 0
            while text[at:].strip():
                obj, at = decoder.raw_decode(text, text.index("{", at))
                versions.append(self.sdk.api_client.deserialize(FakeResponse(obj), models.KubeflowOrgV1TFJob))
        seen = [j for j in versions if any(c.type == "Restarting" and c.status == "True"
                                           for c in self.sdk.get_job_conditions(job=j))]
        self.assertTrue(seen, f"no version of {len(versions)} was Restarting")
        conditions = seen[0].status.conditions
        self.assertEqual((conditions[-1].type, conditions[-1].reason), ("Restarting", "TFJobRestarting"))
        self.assertNotIn("Running", [c.type for c in conditions], "TFJob drops Running while Restarting")
        last = self.tfjob("flaky")["status"]["conditions"][-1]
        self.assertEqual((last["type"], last["reason"]), ("Failed", "TFJobFailed"))
        self.assertIn("backoffLimit", last["message"])

    def test_the_plugin_reads_a_tfjob_and_convert_moves_it_to_a_distributedtraining(self):
        tf = manifest("conv", {"Chief": role(1, 0, 3), "PS": role(1), "Worker": role(1)})
        kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(tf))
        self.sdk.wait_for_job_conditions("conv", wait_timeout=60, polling_interval=1)
        r = dtr("status", "tfjob/conv", "-n", self.ns)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("State:      Succeeded", r.stdout)
        self.assertIn("Replicas:   Chief 0/1 running, 1 succeeded", r.stdout)
        self.assertRegex(r.stdout, r"conv-chief-0 +chief 0 +Succeeded")
        self.assertRegex(r.stdout, r"conv-worker-0 +worker 0 ")
        missing = dtr("status", "tfjob/nope", "-n", self.ns)
        self.assertEqual(missing.returncode, 1)
        self.assertIn('tfjob "nope" not found', missing.stderr)

        # The same manifest, converted, runs as a DistributedTraining (elsewhere: the same names).
        with Namespace("converted") as other:
            conv = dtr("convert", "-f", "-", input=json.dumps(tf))
            self.assertEqual(conv.returncode, 0, conv.stderr)
            self.assertIn("backoffLimit is unset", conv.stderr)
            kubectl("apply", "-n", other, "-f", "-", input=conv.stdout)
            kubectl("wait", "-n", other, "--for=condition=Succeeded", "distributedtraining/conv", "--timeout=60s")
            pods = get_json("pods", "-n", other, "-l", "disttrain.io/job-name=conv")["items"]
            self.assertEqual(sorted(p["metadata"]["name"] for p in pods), ["conv-chief-0", "conv-ps-0", "conv-worker-0"])
            # cleanPodPolicy None (TFJob's default) was written out: the parameter server is kept.
            self.assertFalse(any(p["metadata"].get("deletionTimestamp") for p in pods))

    def test_a_master_is_the_chief_under_its_legacy_name(self):
        kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(manifest(
            "legacy", {"Master": role(1, 0, 3), "Worker": role(1)})))
        self.sdk.wait_for_job_conditions("legacy", wait_timeout=60, polling_interval=1)
        self.assertEqual(self.sdk.get_job_pod_names("legacy", is_master=True), ["legacy-master-0"])
        master = get_json("pod", "legacy-master-0", "-n", self.ns)
        self.assertEqual(master["metadata"]["labels"]["training.kubeflow.org/replica-type"], "master")
        env = {e["name"]: e.get("value") for e in master["spec"]["containers"][0]["env"]}
        tf_config = json.loads(env["TF_CONFIG"])
        self.assertEqual(tf_config["task"], {"type": "master", "index": 0})
        self.assertEqual(tf_config["cluster"]["master"], [f"legacy-master-0.{self.ns}.svc:2222"])
        self.assertEqual(self.tfjob("legacy")["status"]["replicaStatuses"]["Master"]["succeeded"], 1)

    def test_the_crd_refuses_what_the_training_operators_webhook_refused(self):
        def refused(name, replicas):
            r = kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(manifest(name, replicas)), check=False)
            self.assertNotEqual(r.returncode, 0, f"{name} was accepted")
            return r.stderr
        no_tf = {"replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}}
        self.assertIn("must have at least one container with name tensorflow", refused("no-tf", {"Worker": no_tf}))
        self.assertIn("spec.tfReplicaSpecs.Worker.template.spec.containers",
                      refused("empty", {"Worker": {"template": {"spec": {"containers": []}}}}))
        self.assertIn("spec.tfReplicaSpecs.Worker.replicas",
                      refused("negative", {"Worker": dict(role(1), replicas=-1)}))
        self.assertIn("tfReplicaSpecs keys must be Chief, PS, Worker or Evaluator",
                      refused("unknown", {"Launcher": role(1)}))
        self.assertIn("must not have more than 1 Chief or Master role",
                      refused("two-chiefs", {"Chief": role(1), "Master": role(1)}))
        r = kubectl("apply", "-n", self.ns, "-f", "-", check=False, input=json.dumps(
            dict(manifest("mby", {"Worker": role(1)}, {"managedBy": "someone.else/controller"}))))
        self.assertIn("spec.runPolicy.managedBy", r.stderr)

    def test_a_namespace_selector_the_api_server_cannot_parse_exits_2(self):
        bad = OperatorProcess("tfjob-bad-selector", "--tfjob", "--tfjob-namespace-selector=team in (a")
        with self.assertRaisesRegex(AssertionError, "operator exited with 2"):
            bad.start()
        self.assertIn('--tfjob-namespace-selector "team in (a" is not a label selector', bad.read_log())

    def test_a_tfjob_the_schema_lets_through_but_the_engine_refuses_fails_with_the_field(self):
        # Two chief replicas under one key: the CRD (like the webhook) counts keys, the engine replicas.
        kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(manifest(
            "chiefs", {"Chief": role(2), "Worker": role(1)})))
        cond = wait_until("Failed", lambda: [c for c in self.tfjob("chiefs").get("status", {}).get("conditions", [])
                                             if c["type"] == "Failed" and c["status"] == "True"], timeout=30)[0]
        self.assertIn("Chief", cond["message"])
        self.assertEqual(OPERATOR.proc.poll(), None, "the operator keeps serving")


if __name__ == "__main__":
    unittest.main()
