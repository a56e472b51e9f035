"""The operator runs DistributedTraining jobs to completion against the real local cluster.

One test per behaviour of the lifecycle issue: success policies, failure and restart policies,
backoffLimit, deadline and TTL through delayed requeues alone, suspend/resume, remembered
successes, cleanup of parameter servers, garbage collection, and an operator killed mid-way.
"""
import json
import os
import subprocess
import time
import unittest

from crd_test import install_crd
from kube import BIN, KUBECONFIG, TOOLS, Namespace, apply, get_json, job_events, kubectl, table_rows, wait_job_event, wait_until
from operator_process import OperatorProcess
from probe import Probe

OPERATOR = None


def setUpModule():
    global OPERATOR
    install_crd()
    OPERATOR = OperatorProcess("lifecycle", "--workers", "4").start()


def tearDownModule():
    code = OPERATOR.stop()
    assert code == 0, f"operator exited {code} on SIGTERM"


def role(replicas, exit_code=None, run_seconds=None, restart_policy=None, message=None):
    annotations = {}
    if message is not None:
        annotations["test.disttrain.io/termination-message"] = message
    if exit_code is not None:
        annotations["test.disttrain.io/exit-code"] = str(exit_code)
    if run_seconds is not None:
        annotations["test.disttrain.io/run-seconds"] = str(run_seconds)
    spec = {"replicas": replicas, "template": {
        "metadata": {"annotations": annotations},
        "spec": {"containers": [{"name": "tensorflow", "image": "registry.example/trainer:1"}]}}}
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    return spec


def job(name, run_policy=None, success_policy=None, **roles):
    j = {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
         "metadata": {"name": name}, "spec": {"replicaSpecs": roles}}
    if run_policy:
        j["spec"]["runPolicy"] = run_policy
    if success_policy:
        j["spec"]["successPolicy"] = success_policy
    return j


class LifecycleTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("life")
        self.ns = self.ns_ctx.__enter__()

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)

    # --- helpers -------------------------------------------------------------------------------
    def job(self, name):
        return get_json("distributedtraining", name, "-n", self.ns)

    def state(self, name):
        return self.job(name).get("status", {}).get("state")

    def true_condition(self, name, ctype):
        c = self.condition(name, ctype)
        return c if c and c["status"] == "True" else None

    def condition(self, name, ctype):
        for c in self.job(name).get("status", {}).get("conditions", []):
            if c["type"] == ctype:
                return c
        return None

    def wait_state(self, name, state, timeout=60):
        return wait_until(f"job {name} to be {state}", lambda: self.state(name) == state and self.job(name),
                          timeout=timeout)

    def pods(self, name, extra_selector=""):
        sel = f"disttrain.io/job-name={name}" + (f",{extra_selector}" if extra_selector else "")
        return get_json("pods", "-n", self.ns, "-l", sel)["items"]

    def live_pods(self, name, extra_selector=""):
        return [p for p in self.pods(name, extra_selector) if not p["metadata"].get("deletionTimestamp")]

    def events(self, name):
        return job_events(self.ns, name)

    def wait_event(self, name, reason, count=1, timeout=30):
        return wait_job_event(self.ns, name, reason, count, timeout)

    def wait_no_pods(self, name, selector):
        wait_until(f"{selector} pods of {name} to be gone", lambda: not self.pods(name, selector), timeout=30)

    # --- behaviours ----------------------------------------------------------------------------
    def test_happy_path_with_chief_tears_down_parameter_servers(self):
        # An evaluator that never exits: kept for its final evaluation, at most the grace (5 s here).
        apply(job("happy", {"finalEvaluationGracePeriodSeconds": 5},
                  Chief=role(1, 0, 3), PS=role(2), Worker=role(2), Evaluator=role(1)), self.ns)
        wait_until("6 pods", lambda: len(self.pods("happy")) == 6, timeout=30)
        self.wait_state("happy", "Running", timeout=30)
        worker = [p for p in self.pods("happy") if p["metadata"]["name"] == "happy-worker-1"][0]
        env = {e["name"]: e.get("value") for e in worker["spec"]["containers"][0]["env"]}
        self.assertEqual(json.loads(env["TF_CONFIG"])["task"], {"type": "worker", "index": 1})
        # One headless Service for the job; each pod is <pod>.happy.<ns>.svc through it.
        svc = get_json("service", "happy", "-n", self.ns)
        self.assertEqual(svc["spec"]["clusterIP"], "None")
        self.assertTrue(svc["spec"]["publishNotReadyAddresses"])
        self.assertEqual(get_json("services", "-n", self.ns, "-l", "disttrain.io/job-name=happy")["items"], [svc])
        self.assertIn("happy-ps-1.happy.", json.loads(env["TF_CONFIG"])["cluster"]["ps"][1])
        # The endpoint controllers publish each pod's hostname, which CoreDNS serves as that name.
        hostnames = lambda: {e.get("hostname") for s in get_json(
            "endpointslices", "-n", self.ns, "-l", "kubernetes.io/service-name=happy")["items"]
            for e in s.get("endpoints") or []}
        wait_until("every pod's hostname in the Service's EndpointSlices", lambda: hostnames() >= {
            "happy-chief-0", "happy-ps-0", "happy-ps-1", "happy-worker-0", "happy-worker-1", "happy-evaluator-0"},
            timeout=30)

        status = self.wait_state("happy", "Succeeded", timeout=30)["status"]
        evaluator = self.pods("happy", "disttrain.io/replica-type=evaluator")
        self.assertEqual([p["metadata"].get("deletionTimestamp") for p in evaluator], [None],
                         "the evaluator outlives success: it evaluates the final checkpoint")
        self.assertIn("the chief succeeded", self.condition("happy", "Succeeded")["message"])
        self.assertIn("completionTime", status)
        self.assertEqual(status["replicaStatuses"]["Chief"]["succeeded"], 1)
        self.wait_no_pods("happy", "disttrain.io/replica-type=ps")
        self.wait_no_pods("happy", "disttrain.io/replica-type=worker")
        self.wait_no_pods("happy", "disttrain.io/replica-type=evaluator")
        # The pass that deletes the evaluator at the grace period's end also decides the condition,
        # but deletes before it writes the status (a write that may be held back or retried): a CI
        # run read the status in between.
        evaluated = wait_until("the Evaluated condition", lambda: self.condition("happy", "Evaluated"), timeout=30)
        self.assertEqual((evaluated["status"], evaluated["reason"]), ("False", "EvaluationTimedOut"))
        chief = self.pods("happy", "disttrain.io/replica-type=chief")
        self.assertEqual(chief[0]["status"]["phase"], "Succeeded")  # kept for its logs
        reasons = [r for r, _ in self.events("happy")]
        self.assertIn("SuccessfulCreatePod", reasons)
        self.assertIn("JobSucceeded", reasons)
        self.assertIn("SuccessfulDeletePod", reasons)

    def test_an_evaluator_that_finishes_after_the_chief_is_kept_and_its_result_reaches_the_status(self):
        # The evaluator exits 4 s after the chief: under cleanPodPolicy Running it used to be deleted the
        # moment the chief succeeded, and the final evaluation never reached status.result.
        chief = json.dumps({"globalStep": 400, "loss": 0.5})
        evaluator = json.dumps({"globalStep": 400, "accuracy": 0.85, "loss": 0.42})
        apply(job("evalafter", Chief=role(1, 0, 2, message=chief), PS=role(1), Worker=role(1),
                  Evaluator=role(1, 0, 6, message=evaluator)), self.ns)
        self.wait_state("evalafter", "Succeeded", timeout=30)
        self.wait_no_pods("evalafter", "disttrain.io/replica-type=ps")
        wait_until("the Evaluated condition", lambda: self.condition("evalafter", "Evaluated"), timeout=30)
        evaluated = self.condition("evalafter", "Evaluated")
        self.assertEqual((evaluated["status"], evaluated["reason"]), ("True", "FinalCheckpointEvaluated"),
                         evaluated)
        result = self.job("evalafter")["status"]["result"]
        self.assertEqual((result["evaluatedStep"], result["accuracy"]), (400, 0.85))
        pod = self.pods("evalafter", "disttrain.io/replica-type=evaluator")
        self.assertEqual([p["status"]["phase"] for p in pod], ["Succeeded"], "it ended by itself")
        self.wait_event("evalafter", "FinalCheckpointEvaluated")
        # `kubectl wait` on the condition is how a script waits for the final accuracy.
        kubectl("wait", "--for=condition=Evaluated", "dtr/evalafter", "-n", self.ns, "--timeout=5s")

    def test_the_chiefs_and_evaluators_results_reach_the_status_and_kubectl_get_wide(self):
        chief = json.dumps({"globalStep": 1500, "loss": 0.3738555521875494, "trainAccuracy": 0.875,
                            "trainSeconds": 42.5})
        evaluator = json.dumps({"globalStep": 1500, "accuracy": 0.8531, "loss": 0.41})
        apply(job("result", Chief=role(1, 0, 3, message=chief), PS=role(1), Worker=role(1),
                  Evaluator=role(1, 0, 1, message=evaluator)), self.ns)
        status = self.wait_state("result", "Succeeded", timeout=30)["status"]
        # Programs read the figures at full precision; people read 4 significant digits (display).
        self.assertEqual(status["result"], {"globalStep": 1500, "loss": 0.3738555521875494, "trainAccuracy": 0.875,
                                            "trainSeconds": 42.5, "accuracy": 0.8531, "evalLoss": 0.41,
                                            "evaluatedStep": 1500,
                                            "display": {"loss": "0.3739", "accuracy": "0.8531"}})
        # Events are posted after the status write that carries the result: wait for the one that
        # describes the whole result (the evaluator's, ending first, is told on its own before it).
        whole = "global step 1500, loss 0.3739, train accuracy 0.8750, test accuracy 0.8531 at step 1500"
        told = lambda: [m for r, m in self.events("result") if r == "TrainingResult"]
        wait_until("the TrainingResult event of the whole result", lambda: whole in told(), timeout=30)
        wide = kubectl("get", "dtr", "result", "-n", self.ns, "-o", "wide").stdout
        row = table_rows(wide)[0]  # PROGRESS and ETA are empty: no /metrics on kwok
        self.assertEqual((row["STEP"], row["LOSS"], row["ACCURACY"]), ("1500", "0.3739", "0.8531"), wide)
        # A chief that writes plain text leaves no result, and the job still succeeds.
        apply(job("textresult", Chief=role(1, 0, 1, message="done, bye"), PS=role(1)), self.ns)
        self.assertNotIn("result", self.wait_state("textresult", "Succeeded", timeout=30)["status"])

    def test_malformed_templates_fail_their_job_and_the_operator_keeps_serving(self):
        pid = OPERATOR.proc.pid
        container = ["spec", "containers", 0]
        cases = [
            # (name, path inside the Worker template, value, the field (under the template) named)
            ("name-number", container + ["name"], 7, "spec.containers[0].name"),
            ("env-map", container + ["env"], {"A": "b"}, "spec.containers[0].env"),
            ("env-name", container + ["env"], [{"name": 3, "value": "x"}], "spec.containers[0].env[0].name"),
            ("env-value", container + ["env"], [{"name": "A", "value": 1}], "spec.containers[0].env[0].value"),
            ("env-item", container + ["env"], ["A=b"], "spec.containers[0].env[0]"),
            ("ports-number", container + ["ports"], 2222, "spec.containers[0].ports"),
            ("port-name", container + ["ports"], [{"name": 1, "containerPort": 2222}], "spec.containers[0].ports[0].name"),
            ("port-string", container + ["ports"], [{"name": "tfjob-port", "containerPort": "2222"}],
             "spec.containers[0].ports[0].containerPort"),
            ("resources-list", container + ["resources"], ["cpu"], "spec.containers[0].resources"),
            ("gpu-bool", container + ["resources"], {"limits": {"nvidia.com/gpu": True}},
             "spec.containers[0].resources.limits"),
            ("args-string", container + ["args"], "--steps=1", "spec.containers[0].args"),
            ("command-item", container + ["command"], ["python", 3], "spec.containers[0].command[1]"),
            ("labels-number", ["metadata", "labels"], {"team": 1}, "metadata.labels"),
            ("annotations-list", ["metadata", "annotations"], ["a"], "metadata.annotations"),
        ]
        # The schema types containers as a list of objects: the API server itself refuses these.
        for value in (["tensorflow"], {"name": "t"}):
            refused = job("bad-containers", PS=role(1), Worker=role(1))
            refused["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"] = value
            r = kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(refused), check=False)
            self.assertNotEqual(r.returncode, 0, f"the API server accepted containers={value!r}")
            self.assertIn("spec.replicaSpecs.Worker.template.spec.containers", r.stderr)
        for name, path, value, field in cases:
            manifest = job(f"bad-{name}", PS=role(1), Worker=role(1))
            node = manifest["spec"]["replicaSpecs"]["Worker"]["template"]
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            # The rest of the template is free-form in the schema: the API server accepts these.
            apply(manifest, self.ns)
            with self.subTest(name):
                self.wait_state(f"bad-{name}", "Failed", timeout=30)
                failed = self.condition(f"bad-{name}", "Failed")
                self.assertEqual(failed["reason"], "InvalidSpec")
                self.assertIn(f"spec.replicaSpecs.Worker.template.{field}", failed["message"])
                self.assertEqual(self.pods(f"bad-{name}"), [], "no pod was created for an invalid job")
        self.assertIsNone(OPERATOR.proc.poll(), "the operator process died")
        apply(job("good-after-bad", Chief=role(1, 0, 1), PS=role(1)), self.ns)
        self.wait_state("good-after-bad", "Succeeded", timeout=60)
        self.wait_no_pods("good-after-bad", "disttrain.io/replica-type=ps")
        self.assertEqual(OPERATOR.proc.pid, pid)
        self.assertIsNone(OPERATOR.proc.poll(), "the operator process died")

    def test_without_chief_worker_zero_decides(self):
        apply(job("nochief", PS=role(1), Worker={**role(2)}), self.ns)
        # Every state the job's status goes through, as `kubectl get -w` shows it.
        watch = subprocess.Popen([os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "dtr", "nochief",
                                  "-n", self.ns, "-w", "-o", "jsonpath={.status.state}{'\\n'}"],
                                 stdout=subprocess.PIPE, text=True)
        try:
            wait_until("pods", lambda: len(self.pods("nochief")) == 3, timeout=30)
            self.wait_state("nochief", "Running", timeout=30)
            kubectl("annotate", "pod", "nochief-worker-1", "-n", self.ns, "test.disttrain.io/exit-code=0")
            # Once the status counts worker 1's success the operator has decided on it.
            wait_until("worker 1 counted", lambda: self.job("nochief").get("status", {}).get(
                "replicaStatuses", {}).get("Worker", {}).get("succeeded") == 1, timeout=30)
            self.assertEqual(self.state("nochief"), "Running")
            kubectl("annotate", "pod", "nochief-worker-0", "-n", self.ns, "test.disttrain.io/exit-code=0")
            self.wait_state("nochief", "Succeeded", timeout=30)
        finally:
            watch.kill()
        states = [s for s in watch.stdout.read().split() if s]
        watch.stdout.close()
        watch.wait()
        # A worker finishing before the job does must not send the State column back to Created.
        after_running = states[states.index("Running"):]
        self.assertNotIn("Created", after_running, f"states seen: {states}")
        self.assertIn("worker 0 succeeded", self.condition("nochief", "Succeeded")["message"])
        self.wait_no_pods("nochief", "disttrain.io/replica-type=ps")

    def test_all_workers_waits_for_every_worker(self):
        apply(job("allw", success_policy="AllWorkers", PS=role(1),
                  Worker=role(3, 0, 2)), self.ns)
        wait_until("workers to succeed", lambda: self.job("allw").get("status", {}).get(
            "replicaStatuses", {}).get("Worker", {}).get("succeeded") == 3, timeout=40)
        self.wait_state("allw", "Succeeded", timeout=20)
        self.assertIn("all 3 workers succeeded", self.condition("allw", "Succeeded")["message"])

    def test_chief_permanent_failure_fails_the_job(self):
        apply(job("chieffail", Chief=role(1, 1, 2, "ExitCode"), PS=role(2), Worker=role(1)), self.ns)
        self.wait_state("chieffail", "Failed", timeout=40)
        cond = self.condition("chieffail", "Failed")
        self.assertEqual(cond["reason"], "ChiefFailed")
        self.assertIn("pod chieffail-chief-0 exited with code 1", cond["message"])
        self.assertIn("permanent", cond["message"])
        self.wait_no_pods("chieffail", "disttrain.io/replica-type=ps")

    def test_retryable_worker_failures_restart_until_backoff_limit(self):
        apply(job("retry", run_policy={"backoffLimit": 2}, Chief=role(1), PS=role(1),
                  Worker=role(1, 137, 1, "ExitCode")), self.ns)
        self.wait_state("retry", "Failed", timeout=60)
        cond = self.condition("retry", "Failed")
        self.assertEqual(cond["reason"], "BackoffLimitExceeded")
        self.assertIn("exited with code 137", cond["message"])
        status = self.job("retry")["status"]
        self.assertEqual(status["replicaStatuses"]["Worker"]["restarts"], 2)
        self.assertEqual(len(self.wait_event("retry", "Restarting", count=2)), 2)
        self.wait_no_pods("retry", "disttrain.io/replica-type=ps")

    def test_pods_refused_by_a_quota_set_replica_failure_until_the_quota_allows_them(self):
        kubectl("create", "quota", "two-pods", "--hard=pods=2", "-n", self.ns)
        apply(job("quota", Chief=role(1), PS=role(1), Worker=role(2)), self.ns)

        def failing():
            c = self.condition("quota", "ReplicaFailure")
            return c if c and c["status"] == "True" and "exceeded quota" in c["message"] else None
        cond = wait_until("condition ReplicaFailure with the quota's message", failing, timeout=60)
        self.assertEqual(cond["reason"], "FailedCreate")
        self.assertNotEqual(self.state("quota"), "Failed")  # the cause may go away: it keeps trying
        # The one reason the job waits, in one place.
        waiting = wait_until("condition Waiting", lambda: self.true_condition("quota", "Waiting"), timeout=30)
        self.assertEqual(waiting["reason"], "FailedCreate")
        self.assertIn("exceeded quota: two-pods", waiting["message"])

        def aggregated():
            items = get_json("events", "-n", self.ns, "--field-selector",
                             "involvedObject.name=quota,reason=FailedCreatePod")["items"]
            return [e for e in items if e.get("count", 1) >= 2]
        # The retries are one event with a count, as the Kubernetes event recorder does.
        wait_until("an aggregated FailedCreatePod event", aggregated, timeout=60)

        kubectl("delete", "quota", "two-pods", "-n", self.ns)
        wait_until("all 4 pods once the quota is gone", lambda: len(self.live_pods("quota")) == 4, timeout=180)
        wait_until("ReplicaFailure cleared",
                   lambda: self.condition("quota", "ReplicaFailure")["status"] == "False", timeout=30)
        wait_until("Waiting cleared", lambda: self.condition("quota", "Waiting")["status"] == "False", timeout=30)

    def test_a_pod_the_scheduler_cannot_place_is_why_the_job_waits_until_it_can(self):
        pool = {"disttrain.test/pool": self.ns}  # no node has it yet
        worker = role(1, 0, 5)
        worker["template"]["spec"]["nodeSelector"] = pool
        apply(job("place", PS=role(1), Worker=worker), self.ns)
        waiting = wait_until("condition Waiting", lambda: self.true_condition("place", "Waiting"), timeout=60)
        self.assertEqual(waiting["reason"], "Unschedulable")
        self.assertIn("pod place-worker-0: 0/", waiting["message"])
        self.assertIn("didn't match Pod's node affinity/selector", waiting["message"])
        self.assertEqual(self.state("place"), "Created")
        r = subprocess.run([os.path.join(BIN, "kubectl-dtr"), "status", "place", "-n", self.ns],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, KUBECONFIG=KUBECONFIG, PATH=f"{TOOLS}:{os.environ['PATH']}"))
        self.assertIn("Waiting:    Unschedulable for ", r.stdout, r.stderr)

        node = get_json("nodes", "-l", "type=kwok")["items"][0]["metadata"]["name"]
        kubectl("label", "node", node, f"disttrain.test/pool={self.ns}")
        try:
            wait_until("Waiting cleared", lambda: self.condition("place", "Waiting")["status"] == "False",
                       timeout=90)
            self.assertIn(self.condition("place", "Waiting")["reason"], ("NothingHoldsIt", "JobEnded"))
            self.wait_state("place", "Succeeded", timeout=60)
        finally:
            kubectl("label", "node", node, "disttrain.test/pool-")

    def test_in_place_restarts_count_against_backoff_limit(self):
        apply(job("inplace", run_policy={"backoffLimit": 3}, PS=role(1),
                  Worker=role(1, 1, 1, "OnFailure")), self.ns)
        self.wait_state("inplace", "Failed", timeout=60)
        cond = self.condition("inplace", "Failed")
        self.assertEqual(cond["reason"], "BackoffLimitExceeded")
        self.assertIn("restarted in place", cond["message"])

    def test_failed_parameter_server_is_restarted(self):
        apply(job("psfail", Chief=role(1, 0, 8), PS=role(1, 1, 1), Worker=role(1)), self.ns)
        wait_until("a PS restart", lambda: self.job("psfail").get("status", {}).get(
            "replicaStatuses", {}).get("PS", {}).get("restarts", 0) >= 1, timeout=30)
        self.assertNotEqual(self.state("psfail"), "Failed")

    def test_evaluator_failure_never_fails_the_job(self):
        apply(job("evalfail", Chief=role(1, 0, 5), Worker=role(1), Evaluator=role(1, 1, 1)), self.ns)
        wait_until("the evaluator to fail", lambda: self.job("evalfail").get("status", {}).get(
            "replicaStatuses", {}).get("Evaluator", {}).get("failed") == 1, timeout=30)
        self.assertNotEqual(self.state("evalfail"), "Failed")
        self.wait_state("evalfail", "Succeeded", timeout=30)

    def test_deadline_fires_without_any_other_event(self):
        apply(job("deadline", run_policy={"activeDeadlineSeconds": 4}, PS=role(1), Worker=role(1)), self.ns)
        self.wait_state("deadline", "Running", timeout=30)
        started = time.monotonic()
        self.wait_state("deadline", "Failed", timeout=30)
        self.assertLess(time.monotonic() - started, 8)
        self.assertEqual(self.condition("deadline", "Failed")["reason"], "DeadlineExceeded")
        self.wait_no_pods("deadline", "")

    def test_ttl_deletes_the_finished_job_and_what_it_owns(self):
        apply(job("ttl", run_policy={"ttlSecondsAfterFinished": 3}, Chief=role(1, 0, 1), PS=role(1)), self.ns)
        self.wait_state("ttl", "Succeeded", timeout=30)
        wait_until("the job to be deleted", lambda: "NotFound" in kubectl(
            "get", "dtr", "ttl", "-n", self.ns, check=False).stderr, timeout=20)
        wait_until("its pods and services to be collected", lambda: not self.pods("ttl") and not get_json(
            "services", "-n", self.ns, "-l", "disttrain.io/job-name=ttl")["items"], timeout=60)

    def test_suspend_deletes_pods_and_resume_recreates_them(self):
        apply(job("susp", PS=role(2), Worker=role(2)), self.ns)
        self.wait_state("susp", "Running", timeout=30)
        kubectl("patch", "dtr", "susp", "-n", self.ns, "--type=merge", "-p", '{"spec":{"runPolicy":{"suspend":true}}}')
        self.wait_state("susp", "Suspended", timeout=30)
        self.wait_no_pods("susp", "")
        kubectl("patch", "dtr", "susp", "-n", self.ns, "--type=merge", "-p", '{"spec":{"runPolicy":{"suspend":false}}}')
        self.wait_state("susp", "Running", timeout=30)
        self.assertEqual(len(self.live_pods("susp")), 4)
        reasons = [r for r, _ in self.events("susp")]
        self.assertIn("Suspended", reasons)
        self.assertIn("Resumed", reasons)

    def test_garbage_collected_succeeded_pod_is_not_recreated(self):
        probe = Probe(self.ns, "disttrain.io/job-name=gcpod")
        try:
            apply(job("gcpod", success_policy="AllWorkers", PS=role(1),
                      Worker=role(2)), self.ns)
            wait_until("pods", lambda: len(self.pods("gcpod")) == 3, timeout=30)
            kubectl("annotate", "pod", "gcpod-worker-0", "-n", self.ns, "test.disttrain.io/exit-code=0")
            wait_until("worker 0 remembered", lambda: self.job("gcpod").get("status", {}).get(
                "replicaStatuses", {}).get("Worker", {}).get("succeededIndexes") == [0], timeout=30)
            kubectl("delete", "pod", "gcpod-worker-0", "-n", self.ns, "--wait=true")
            # The job can only succeed through passes that ran after the deletion (worker 1 exits
            # after it); every pod ever created was seen by the probe.
            kubectl("annotate", "pod", "gcpod-worker-1", "-n", self.ns, "test.disttrain.io/exit-code=0")
            self.wait_state("gcpod", "Succeeded", timeout=30)
            self.assertEqual(len(probe.find("add", "gcpod-worker-0")), 1, "worker 0 was recreated")
        finally:
            probe.stop()

    def test_deleting_a_job_removes_everything_it_owns(self):
        apply(job("owned", PS=role(1), Worker=role(2)), self.ns)
        wait_until("pods", lambda: len(self.pods("owned")) == 3, timeout=30)
        kubectl("delete", "dtr", "owned", "-n", self.ns)
        wait_until("pods, services and the NetworkPolicy collected", lambda: not self.pods("owned") and not get_json(
            "services", "-n", self.ns, "-l", "disttrain.io/job-name=owned")["items"] and not get_json(
            "networkpolicies", "-n", self.ns, "-l", "disttrain.io/job-name=owned")["items"], timeout=60)

    def test_a_job_gets_its_network_policy_before_its_pods_and_it_goes_with_the_job(self):
        j = job("fenced", Chief=role(1, 0, 5), PS=role(1), Worker=role(2))
        monitoring = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
        j["spec"]["networkPolicy"] = {"metricsFrom": [monitoring]}
        apply(j, self.ns)
        policy = wait_until("the NetworkPolicy", lambda: get_json("networkpolicy", "fenced", "-n", self.ns),
                            timeout=30)
        own_pods = {"matchLabels": {"disttrain.io/job-name": "fenced"}}
        self.assertEqual(policy["spec"]["podSelector"], own_pods)
        self.assertEqual(policy["spec"]["policyTypes"], ["Ingress"])
        self.assertEqual(policy["spec"]["ingress"], [
            {"from": [{"podSelector": own_pods}], "ports": [{"protocol": "TCP", "port": 2222}]},
            {"from": [monitoring], "ports": [{"protocol": "TCP", "port": 9095}]}])
        self.assertEqual(policy["metadata"]["ownerReferences"][0]["kind"], "DistributedTraining")
        wait_until("the pods", lambda: len(self.pods("fenced")) == 4, timeout=30)
        first_pod = min(int(p["metadata"]["resourceVersion"]) for p in self.pods("fenced"))
        self.assertLess(int(policy["metadata"]["resourceVersion"]), first_pod, "a pod came before the policy")
        self.wait_event("fenced", "SuccessfulCreateNetworkPolicy")
        self.wait_state("fenced", "Succeeded", timeout=30)
        kubectl("delete", "dtr", "fenced", "-n", self.ns)
        wait_until("the NetworkPolicy collected with the job", lambda: "NotFound" in kubectl(
            "get", "networkpolicy", "fenced", "-n", self.ns, check=False).stderr, timeout=60)

    def test_a_job_can_go_without_a_network_policy_and_the_api_server_checks_the_field(self):
        j = job("open", PS=role(1), Worker=role(1))
        j["spec"]["networkPolicy"] = {"enabled": False}
        apply(j, self.ns)
        wait_until("the pods", lambda: len(self.pods("open")) == 2, timeout=30)
        self.assertEqual(get_json("networkpolicies", "-n", self.ns)["items"], [])
        for bad, message in (({"jobPorts": "Some"}, "Unsupported value: \"Some\""),
                             ({"metricsFrom": [{}]}, "should have at least 1 properties")):
            j = job("refused", PS=role(1), Worker=role(1))
            j["spec"]["networkPolicy"] = bad
            out = kubectl("apply", "-n", self.ns, "-f", "-", input=json.dumps(j), check=False)
            self.assertNotEqual(out.returncode, 0, bad)
            self.assertIn(message, out.stderr)

    def test_gang_scheduling_without_the_podgroup_api_still_runs_and_warns(self):
        apply(job("gang", run_policy={"schedulingPolicy": {"minAvailable": 2}}, PS=role(1),
                  Worker=role(1)), self.ns)
        self.wait_state("gang", "Running", timeout=30)
        self.wait_event("gang", "PodGroupUnavailable")
        pod = self.pods("gang")[0]
        self.assertEqual(pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"], "gang")

    def test_gang_scheduling_creates_the_podgroup_before_the_pods(self):
        # A stand-in for Volcano's PodGroup API: the operator only needs the resource to exist.
        kubectl("apply", "-f", "-", input=json.dumps(VOLCANO_PODGROUP_CRD))
        kubectl("wait", "--for=condition=Established", "crd/podgroups.scheduling.volcano.sh", "--timeout=60s")
        self.addCleanup(kubectl, "delete", "crd", "podgroups.scheduling.volcano.sh", "--wait=true")
        apply(job("gang2", run_policy={"schedulingPolicy": {"queue": "research"}},
                  Chief=role(1, 0, 3), PS=role(2), Worker=role(2)), self.ns)
        group = wait_until("the PodGroup", lambda: get_json("podgroups.scheduling.volcano.sh", "gang2", "-n", self.ns),
                           timeout=30)
        self.assertEqual(group["spec"]["minMember"], 5)
        self.assertEqual(group["spec"]["queue"], "research")
        self.assertEqual(group["metadata"]["ownerReferences"][0]["kind"], "DistributedTraining")
        wait_until("the pods", lambda: len(self.pods("gang2")) == 5, timeout=30)
        first_pod = min(p["metadata"]["creationTimestamp"] for p in self.pods("gang2"))
        self.assertLessEqual(group["metadata"]["creationTimestamp"], first_pod)
        self.wait_state("gang2", "Succeeded", timeout=30)
        wait_until("the PodGroup to be deleted with the job finished", lambda: "NotFound" in kubectl(
            "get", "podgroups.scheduling.volcano.sh", "gang2", "-n", self.ns, check=False).stderr, timeout=30)


    def test_a_running_gang_jobs_podgroup_follows_its_spec(self):
        # The training-operator brings its PodGroup up to date on every pass: lowering
        # minAvailable releases a gang that waits. A PodGroup only ever created kept 4.
        kubectl("apply", "-f", "-", input=json.dumps(VOLCANO_PODGROUP_CRD))
        kubectl("wait", "--for=condition=Established", "crd/podgroups.scheduling.volcano.sh", "--timeout=60s")
        self.addCleanup(kubectl, "delete", "crd", "podgroups.scheduling.volcano.sh", "--wait=true")
        apply(job("gang3", run_policy={"schedulingPolicy": {"minAvailable": 4}}, PS=role(1), Worker=role(3)),
              self.ns)

        def min_member():
            return get_json("podgroups.scheduling.volcano.sh", "gang3", "-n", self.ns)["spec"]["minMember"]

        wait_until("the PodGroup", lambda: min_member() == 4, timeout=30)
        self.wait_state("gang3", "Running", timeout=30)
        kubectl("patch", "dtr", "gang3", "-n", self.ns, "--type=merge", "-p",
                json.dumps({"spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 2}}}}))
        wait_until("the PodGroup to follow minAvailable", lambda: min_member() == 2, timeout=30)
        self.wait_event("gang3", "UpdatedPodGroup")


VOLCANO_PODGROUP_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.volcano.sh"},
    "spec": {"group": "scheduling.volcano.sh", "scope": "Namespaced",
             "names": {"kind": "PodGroup", "plural": "podgroups", "singular": "podgroup"},
             "versions": [{"name": "v1beta1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


if __name__ == "__main__":
    unittest.main()
