"""Real pods on the local cluster's real node (kubelet + containerd + CNI + CoreDNS): the operator
installed by `helm install` from its image runs as pods with in-cluster config, RBAC as shipped,
leader election, passing probes and metrics scraped through its Service; the trainer image trains
Fashion-MNIST under it; parameter servers are really gone (their processes ended) when the chief
finishes or fails; a parameter server killed with SIGKILL is restarted and restored; kubectl dtr logs
shows a killed worker's last run, marked as previous, before its restarted run.

Run as a script: without a real node it exits 77, which ctest reports as not run."""
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

import yaml

import realnode
from crd_test import install_crd
from kube import KUBECONFIG, ROOT, TOOLS, Namespace, apply, ensure_tool, get_json, kubectl, wait_until
from pod_logs import DtrLogs, LogFollower, dtr
from prometheus_process import PrometheusProcess, pod_monitor_targets, service_monitor_targets

RELEASE = "dt"
OPERATOR_NS = None


def api_server_port():
    cfg = json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)
    return urllib.parse.urlparse(cfg["clusters"][0]["cluster"]["server"]).port


def helm(*args, timeout=300):
    return subprocess.run([os.path.join(TOOLS, "helm"), "--kubeconfig", KUBECONFIG, *args],
                          capture_output=True, text=True, timeout=timeout)


def setUpModule():
    global OPERATOR_NS
    # make test builds helm beside the first suites: on a cold machine this suite, first in the
    # real node's lane, waits for it (a CI run failed here with no helm yet).
    ensure_tool("helm")
    install_crd()
    OPERATOR_NS = f"disttrain-system-{os.getpid()}"
    node_ip = json.loads(kubectl("get", "node", "-l", f"{realnode.NODE_LABEL}=true", "-o", "json").stdout)[
        "items"][0]["status"]["addresses"][0]["address"]
    values = {
        "nodeSelector": {realnode.NODE_LABEL: "true"},
        "tolerations": [{"key": realnode.NODE_LABEL, "operator": "Exists", "effect": "NoSchedule"}],
        # No kube-proxy on the test node: pods reach the API server on the node's address.
        "extraEnv": [{"name": "KUBERNETES_SERVICE_HOST", "value": node_ip},
                     {"name": "KUBERNETES_SERVICE_PORT", "value": str(api_server_port())}],
        "image": {"pullPolicy": "Never"},
        # status.progress read every 2 s (30 s by default), so a short job shows it moving.
        "progress": {"intervalSeconds": 2},
    }
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        json.dump(values, f)
    r = helm("install", RELEASE, os.path.join(ROOT, "charts", "disttrain"), "-n", OPERATOR_NS, "--create-namespace",
             "-f", f.name, "--wait", "--timeout", "180s")
    os.unlink(f.name)
    if r.returncode != 0:
        pods = kubectl("get", "pods", "-n", OPERATOR_NS, "-o", "wide", check=False).stdout
        # What the operator said before it stopped (a stale image refusing a new flag says so here).
        logs = kubectl("logs", "-n", OPERATOR_NS, "-l", "app.kubernetes.io/name=disttrain", "--previous",
                       "--tail=20", check=False)
        tearDownModule()  # tearDownModule does not run after a failed setUpModule: nothing left behind
        raise AssertionError(f"helm install failed: {r.stderr}\n{pods}\n{logs.stdout}{logs.stderr}")


def tearDownModule():
    helm("uninstall", RELEASE, "-n", OPERATOR_NS, "--wait", "--timeout", "60s")
    kubectl("delete", "namespace", OPERATOR_NS, "--wait=false", check=False)


def operator_pods():
    return get_json("pods", "-n", OPERATOR_NS, "-l", "app.kubernetes.io/name=disttrain")["items"]


def trainer_template(args, model_dir=None):
    container = {"name": "tensorflow", "image": realnode.TRAINER_IMAGE, "imagePullPolicy": "Never", "args": args,
                 "ports": [{"name": "metrics", "containerPort": 9095}]}
    spec = {"containers": [container]}
    if model_dir:
        container["volumeMounts"] = [{"name": "model", "mountPath": "/model"}]
        # The chief keeps its checkpoints in a directory of the one real node (for its restarts).
        spec["volumes"] = [{"name": "model", "hostPath": {"path": model_dir, "type": "Directory"}}]
    return {"spec": realnode.on_real_node(spec)}


def training_job(name, model_dir, steps=1500, chief_args=(), restart="OnFailure", ps=2, workers=2,
                 checkpoint_steps=250):
    common = ["--model=mlp", "--mode=sync", f"--steps={steps}", "--learning-rate=0.1", "--batch-size=64",
              f"--checkpoint-steps={checkpoint_steps}", "--model-dir=/model", "--log-every=250"]
    def role(n, extra=(), policy=restart, volume=model_dir):
        return {"replicas": n, "restartPolicy": policy, "template": trainer_template(common + list(extra), volume)}
    # The evaluator mounts no volume: it fetches each checkpoint from ps 0 over gRPC.
    return {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": name},
            "spec": {"replicaSpecs": {"Chief": role(1, chief_args, "ExitCode"), "PS": role(ps),
                                      "Worker": role(workers), "Evaluator": role(1, volume=None)}}}


def shared_dir():
    d = tempfile.mkdtemp(prefix="disttrain-model-", dir=os.path.join(ROOT, "build"))
    os.chmod(d, 0o777)  # the trainer runs as 65532
    return d


class RealNodeTest(unittest.TestCase):
    def setUp(self):
        self.ns_ctx = Namespace("real")
        self.ns = self.ns_ctx.__enter__()

    def tearDown(self):
        self.ns_ctx.__exit__(None, None, None)

    def pods(self, job, role=None):
        sel = f"disttrain.io/job-name={job}" + (f",disttrain.io/replica-type={role}" if role else "")
        return get_json("pods", "-n", self.ns, "-l", sel)["items"]

    def state(self, job):
        return get_json("dtr", job, "-n", self.ns).get("status", {}).get("state")

    def wait_running(self, pod, timeout=180):
        return wait_until(f"pod {pod} to run", lambda: (p := get_json("pod", pod, "-n", self.ns))["status"].get(
            "phase") == "Running" and p, timeout=timeout)

    def test_operator_runs_from_its_image_with_in_cluster_config_and_serves_metrics_through_its_service(self):
        pods = operator_pods()
        self.assertEqual(len(pods), 2)
        for p in pods:
            self.assertEqual(p["status"]["phase"], "Running")
            ready = [c for c in p["status"]["conditions"] if c["type"] == "Ready"][0]
            self.assertEqual(ready["status"], "True", "readiness probe passes")
            self.assertEqual(p["spec"]["containers"][0]["image"], realnode.OPERATOR_IMAGE)
        logs = "".join(kubectl("logs", "-n", OPERATOR_NS, p["metadata"]["name"]).stdout for p in pods)
        self.assertIn("caches synced", logs)
        lease = get_json("lease", "disttrain-operator-leader", "-n", OPERATOR_NS)
        leader = lease["spec"]["holderIdentity"]
        self.assertIn(leader.split("_")[0], [p["metadata"]["name"] for p in pods])
        metrics = kubectl("get", "--raw", f"/api/v1/namespaces/{OPERATOR_NS}/services/"
                          f"http:{RELEASE}-disttrain-metrics:metrics/proxy/metrics").stdout
        self.assertIn("controller_runtime_reconcile_total", metrics)
        self.assertRegex(metrics, r'leader_election_master_status\{name="disttrain-operator-leader"\} [01]')

    def test_trainer_image_trains_fashion_mnist_and_the_servers_are_gone_after_success(self):
        model_dir = shared_dir()
        applied = time.monotonic()
        apply(training_job("mnist", model_dir), self.ns)
        states = subprocess.Popen([os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "dtr", "mnist",
                                   "-n", self.ns, "-w", "-o", "jsonpath={.status.state}{'\\n'}"],
                                  stdout=subprocess.PIPE, text=True)
        merged = DtrLogs(self.ns, "mnist")
        self.wait_running("mnist-evaluator-0")
        follower = LogFollower(self.ns, "mnist-evaluator-0")
        try:
            self.wait_running("mnist-chief-0")
            ps_and_workers = self.pods("mnist", "ps") + self.pods("mnist", "worker")
            wait_until("every pod to run", lambda: all(
                get_json("pod", p["metadata"]["name"], "-n", self.ns)["status"].get("phase") == "Running"
                for p in ps_and_workers), timeout=180)
            running = time.monotonic()
            ids = [i for p in self.pods("mnist", "ps") + self.pods("mnist", "worker") for i in realnode.container_ids(p)]
            self.assertEqual(len(ids), 4)
            self.assertTrue(set(ids) <= realnode.running_task_ids())

            # The trainer's /metrics on the port named "metrics", through the API server's pod proxy.
            def scrape(pod):
                text = kubectl("get", "--raw", f"/api/v1/namespaces/{self.ns}/pods/{pod}:9095/proxy/metrics").stdout
                return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
                        if l and not l.startswith("#")}
            self.assertGreater(wait_until("the chief's global step on /metrics", lambda: scrape("mnist-chief-0").get(
                "disttrain_trainer_global_step", 0) > 0 and scrape("mnist-chief-0")["disttrain_trainer_global_step"]), 0)
            self.assertGreater(scrape("mnist-ps-0")["disttrain_ps_pushes_applied_total"], 0)
            # status.progress: the operator (a pod of its own) reads the chief's /metrics; the Progress
            # and ETA columns of `kubectl get -o wide` show it while the job trains.
            readings = []

            def progress_with_rate():
                job = get_json("dtr", "mnist", "-n", self.ns)
                p = job.get("status", {}).get("progress")
                if p and p not in readings:
                    readings.append(p)
                return job["status"].get("state") == "Running" and p and p.get("stepsPerSecond", 0) > 0 and \
                    "estimatedCompletionTime" in p and p
            p = wait_until("status.progress with a rate and an estimated completion", progress_with_rate,
                           timeout=60, interval=0.5)
            self.assertEqual(p["targetSteps"], 1500)
            self.assertEqual(p["percent"], p["globalStep"] * 100 // 1500)
            self.assertGreater(p["examplesPerSecond"], p["stepsPerSecond"])
            wide = kubectl("get", "dtr", "mnist", "-n", self.ns, "-o", "wide").stdout.splitlines()
            self.assertIn("PROGRESS", wide[0].split())
            self.assertIn("ETA", wide[0].split())
            self.assertRegex(wide[1], r" \d+% \(\d+/1500\) +\d+(s|m\d*s?) ", "\n".join(wide))
            print("\n".join(wide))
            # kubectl dtr top: every pod's CPU and memory from the kubelet while it trains. The kubelet
            # samples each container on its own schedule (zeros or no row until it has sampled twice), and
            # the job may end before every pod has a sample in one snapshot, so each pod counts once a
            # snapshot has shown its usage.
            seen = [""]
            measured = {}

            def usage():
                r = dtr("top", "mnist", "-n", self.ns)
                self.assertEqual(r.returncode, 0, r.stderr)
                seen[0] = r.stdout + r.stderr
                for row in (l.split() for l in r.stdout.splitlines() if l.startswith("mnist-")):
                    if re.fullmatch(r"\d+m", row[3]) and re.fullmatch(r"[1-9]\d*Mi", row[4]):
                        measured[row[0]] = row
                return len(measured) == 6 and any(row[3] != "0m" for row in measured.values()) and r.stdout
            try:
                top = wait_until("kubectl dtr top to show every pod's usage", usage, timeout=150)
            except AssertionError as e:
                raise AssertionError(f"{e}\npods with usage seen: {sorted(measured)}\n"
                                     f"the last `kubectl dtr top`:\n{seen[0]}") from None
            print(top)
            wait_until("the job to succeed", lambda: self.state("mnist") in ("Succeeded", "Failed"), timeout=600)
            succeeded = time.monotonic()
            self.assertEqual(self.state("mnist"), "Succeeded",
                             kubectl("logs", "-n", self.ns, "mnist-chief-0", check=False).stdout[-3000:])
            wait_until("the evaluator's final evaluation", lambda: any(
                e["global_step"] >= 1500 for e in realnode.events_in(follower.text(), "eval")), timeout=120)
            final = get_json("dtr", "mnist", "-n", self.ns)["status"]["progress"]
            self.assertEqual((final["globalStep"], final["percent"]), (1500, 100), final)
            self.assertNotIn("estimatedCompletionTime", final)
            print(f"status.progress readings while training: {[r['globalStep'] for r in readings]}")
            # kubectl dtr logs -f ends by itself once the job finished and every stream ended.
            self.assertEqual(merged.wait(timeout=180), 0, "".join(merged.errors))
        finally:
            follower.stop()
            merged.stop()
            states.kill()
        logs = merged.by_prefix()
        self.assertEqual(set(logs), {"mnist.chief.0", "mnist.ps.0", "mnist.ps.1", "mnist.worker.0",
                                     "mnist.worker.1", "mnist.evaluator.0"}, "".join(merged.lines[:20]))
        done = realnode.events_in("".join(logs["mnist.chief.0"]), "done")
        self.assertEqual([d["global_step"] for d in done], [1500])
        self.assertTrue(any("parameter server listening" in l for l in logs["mnist.ps.1"]))
        self.assertIn(1500, [e["global_step"] for e in realnode.events_in("".join(logs["mnist.evaluator.0"]), "eval")])
        # The chief's termination message became the job's result, in the status and in -o wide.
        result = get_json("dtr", "mnist", "-n", self.ns)["status"]["result"]
        self.assertEqual(result["globalStep"], 1500)
        self.assertAlmostEqual(result["loss"], done[0]["loss"], places=6)
        self.assertAlmostEqual(result["trainAccuracy"], done[0]["train_accuracy"], places=6)
        wide = kubectl("get", "dtr", "mnist", "-n", self.ns, "-o", "wide").stdout.splitlines()
        self.assertEqual(dict(zip(wide[0].split(), wide[1].split()))["STEP"], "1500", wide)
        status = dtr("status", "mnist", "-n", self.ns)
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertIn("Result:     step 1500, loss ", status.stdout)
        self.assertRegex(status.stdout, r"mnist-chief-0 +chief 0 +Succeeded +Terminated \(Completed, code 0\)")
        print(status.stdout)
        seen = [x for x in states.stdout.read().split() if x]
        states.stdout.close()
        states.wait()
        # What `kubectl get dtr -w` showed: once Running, never back to Created before Succeeded.
        self.assertNotIn("Created", seen[seen.index("Running"):], f"states seen: {seen}")
        evals = realnode.events_in(follower.text(), "eval")
        final = max(evals, key=lambda e: e["global_step"])
        print(f"real pods: Fashion-MNIST accuracy {final['accuracy']:.4f} at step {final['global_step']}")
        self.assertGreaterEqual(final["accuracy"], 0.84)
        # The chief found the servers by the names TF_CONFIG gives (headless Services + CoreDNS).
        chief_log = kubectl("logs", "-n", self.ns, "mnist-chief-0").stdout
        self.assertIn("initialised the parameter servers", chief_log)
        # cleanPodPolicy Running: the servers are deleted; a worker is deleted too unless it had
        # already finished its steps (then it is kept, completed, for its logs).
        wait_until("ps pods to be deleted and workers deleted or completed", lambda: not self.pods("mnist", "ps") and
                   all(p["status"].get("phase") == "Succeeded" for p in self.pods("mnist", "worker")), timeout=60)
        wait_until("their containers' processes to end", lambda: not set(ids) & realnode.running_task_ids(),
                   timeout=60, interval=0.05)
        gone = time.time()
        chief_exit = get_json("pod", "mnist-chief-0", "-n", self.ns)["status"]["containerStatuses"][0]["state"][
            "terminated"]["finishedAt"]
        exit_time = time.mktime(time.strptime(chief_exit, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
        print(json.dumps({"measure": "real-node quickstart", "apply_to_all_running_s": round(running - applied, 1),
                          "apply_to_succeeded_s": round(succeeded - applied, 1),
                          "chief_exit_to_last_ps_container_gone_s": round(gone - exit_time, 1),
                          "note": "chief exit time has 1 s resolution (finishedAt)"}))

    def test_the_final_checkpoint_is_evaluated_in_every_job_before_cleanup(self):
        # Five jobs at once on the one node: the chief's last checkpoint lives on ps 0, which cleanPodPolicy
        # Running deletes the moment the chief succeeds, as it did the evaluator before it could evaluate.
        # One CI run (2026-12-07, both kwok lanes busy beside the node) saw a job's evaluator,
        # running since its pod started, not done within the default grace (60 s) after its chief
        # (alone: 0 s); its logs were gone with its pod. They are now followed into a failure's
        # message, and how long each final evaluation took after the chief is printed.
        names = [f"final{i}" for i in range(5)]
        for name in names:
            apply(training_job(name, shared_dir(), steps=300, ps=1, workers=1, checkpoint_steps=100), self.ns)
        logs = {}
        try:
            def started(pod):  # "started" (its phase past Pending), "gone", or "" (pending)
                found = get_json("pods", "-n", self.ns, "--field-selector", f"metadata.name={pod}")["items"]
                if not found:
                    return "gone"
                return "started" if found[0]["status"].get("phase", "Pending") != "Pending" else ""
            for name in names:
                for pod in (f"{name}-evaluator-0", f"{name}-ps-0"):
                    if wait_until(f"{pod} to start or go", lambda: started(pod), timeout=180) == "started":
                        logs[pod] = LogFollower(self.ns, pod)
            for name in names:
                wait_until(f"{name}'s Evaluated condition", lambda: any(
                    c["type"] == "Evaluated" for c in get_json("dtr", name, "-n", self.ns).get("status", {}).get(
                        "conditions", [])), timeout=600)
        finally:
            for follower in logs.values():
                follower.stop()

        def tail(pod):
            return " | ".join(l.strip() for l in logs[pod].lines[-6:]) if pod in logs else "(no log)"
        took = {}
        for name in names:
            status = get_json("dtr", name, "-n", self.ns)["status"]
            evaluated = [c for c in status["conditions"] if c["type"] == "Evaluated"][0]
            parse = lambda t: datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")
            took[name] = (parse(evaluated["lastTransitionTime"]) - parse(status["completionTime"])).total_seconds()
            self.assertEqual((status["state"], evaluated["status"], evaluated["reason"]),
                             ("Succeeded", "True", "FinalCheckpointEvaluated"),
                             f"{name}: {evaluated}; evaluator: {tail(name + '-evaluator-0')}; "
                             f"ps 0: {tail(name + '-ps-0')}")
            self.assertEqual((status["result"]["globalStep"], status["result"]["evaluatedStep"]), (300, 300), name)
            self.assertGreater(status["result"]["accuracy"], 0.5, name)
            wait_until(f"{name}'s servers to be gone", lambda: not self.pods(name, "ps"), timeout=60)
        print(f"final evaluations done {sorted(took.values())} s after the chiefs succeeded", flush=True)

    def test_a_parameter_server_killed_with_sigkill_is_restored_from_the_chiefs_copy(self):
        model_dir = shared_dir()
        # 2000 steps, not 1500: at 1500 the final accuracy sat on the 0.84 line (0.834 in one
        # run with the kill, 0.847 in the same run without it). At 2000 it still ended at 0.8398
        # once (2026-11-26): 0.84 was inside the run-to-run noise of a run whose ps restarts, so
        # the bar is 0.83; the restore itself is proved by the step it resumed from, below.
        # Checkpoints only at step 0: a restore from a checkpoint (the trainer before the chief's
        # copy, --ps-copy-seconds) would restart the job from step 0.
        apply(training_job("kill", model_dir, steps=2000, chief_args=("--log-every=10",),
                           checkpoint_steps=100000), self.ns)
        merged = DtrLogs(self.ns, "kill")
        self.wait_running("kill-chief-0")
        chief = LogFollower(self.ns, "kill-chief-0")
        evaluator = None

        def chief_steps():
            return [e["global_step"] for e in realnode.events_in(chief.text(), "step")]
        try:
            before = wait_until("the chief at step 500", lambda: (s := max(chief_steps(), default=0)) >= 500 and s,
                                timeout=300)
            time.sleep(1.5)  # three copies (every 0.5 s) after the step seen
            evaluator = LogFollower(self.ns, "kill-evaluator-0")
            ps = get_json("pod", "kill-ps-1", "-n", self.ns)
            realnode.kill_container(realnode.container_ids(ps)[0])
            killed = time.monotonic()
            restore = wait_until("the chief's restore", lambda: next(iter(realnode.events_in(
                chief.text(), "restore")), None), timeout=120)
            resumed = wait_until("the chief stepping past the restored step", lambda: max(
                chief_steps()) > restore["global_step"] and time.monotonic(), timeout=120, interval=0.1)
            # The chief's last step before the kill: its last step event before the restore.
            text = chief.text()
            at_kill = max(e["global_step"] for e in realnode.events_in(
                text[:text.index('"event":"restore"')], "step"))
            ps1_status = wait_until("ps-1 restarted by the kubelet", lambda: (c := get_json(
                "pod", "kill-ps-1", "-n", self.ns)["status"]["containerStatuses"][0])["restartCount"] >= 1 and c,
                timeout=60)
            wait_until("the job to finish", lambda: self.state("kill") in ("Succeeded", "Failed"), timeout=600)
            self.assertEqual(self.state("kill"), "Succeeded", chief.text()[-3000:])
            wait_until("the final evaluation", lambda: any(
                e["global_step"] >= 2000 for e in realnode.events_in(evaluator.text(), "eval")), timeout=120)
            self.assertEqual(merged.wait(timeout=180), 0, "".join(merged.errors))
        finally:
            chief.stop()
            merged.stop()
            if evaluator:
                evaluator.stop()
        # kubectl dtr logs -f followed ps-1 into its restarted container: it started listening twice.
        ps1 = merged.by_prefix()["kill.ps.1"]
        self.assertEqual(sum("parameter server listening" in l for l in ps1), 2, "".join(ps1[-20:]))
        self.assertIn("lost a parameter server", chief.text())
        self.assertEqual(restore.get("source"), "copy", restore)
        self.assertGreaterEqual(restore["global_step"], before, "the copy predates a step seen 1.5 s before "
                                                                "the kill")
        final = max(realnode.events_in(evaluator.text(), "eval"), key=lambda e: e["global_step"])
        died = ps1_status.get("lastState", {}).get("terminated", {}).get("finishedAt")
        started = ps1_status.get("state", {}).get("running", {}).get("startedAt")
        print(f"ps-1's container: died {died}, started again by the kubelet {started}")
        print(f"after kill -9 of ps-1 at step {at_kill}: restored from the chief's copy at step "
              f"{restore['global_step']} ({at_kill - restore['global_step']} steps lost; the copy "
              f"{restore['copy_age_seconds']:.2f} s old at the restore); the chief stepping again "
              f"{resumed - killed:.1f} s after the kill; accuracy {final['accuracy']:.4f} at step "
              f"{final['global_step']}")
        self.assertGreaterEqual(final["accuracy"], 0.83)

    def test_logs_show_a_killed_workers_previous_run_marked_before_its_restarted_run(self):
        model_dir = shared_dir()
        # Steps enough to outlast the test: the logs are read while the job runs (a finished job's
        # workers may be deleted with their logs). No evaluator: fewer pods to start.
        job = training_job("relog", model_dir, steps=100000)
        del job["spec"]["replicaSpecs"]["Evaluator"]
        apply(job, self.ns)
        pod = self.wait_running("relog-worker-1")

        def log(*args):
            return kubectl("logs", "-n", self.ns, "relog-worker-1", *args).stdout

        wait_until("worker-1's first run to log", lambda: "starting" in log(), timeout=60)
        realnode.kill_container(realnode.container_ids(pod)[0])

        def status():
            return get_json("pod", "relog-worker-1", "-n", self.ns)["status"]["containerStatuses"][0]
        wait_until("the kubelet to restart worker-1 in place", lambda: status()["restartCount"] >= 1 and
                   "running" in status()["state"], timeout=60)
        self.assertEqual(status()["lastState"]["terminated"]["exitCode"], 137, "killed by SIGKILL")
        wait_until("its new run to log", lambda: "starting" in log(), timeout=60)
        killed = [l for l in log("--previous").splitlines() if l.strip()]
        self.assertTrue(any("starting" in l for l in killed), killed)

        def runs(lines):
            """Worker 1's lines in the output: (index, text) of its previous run's, then its new run's."""
            split = [(p.strip(), t.rstrip("\n")) for p, sep, t in (l.partition(" | ") for l in lines) if sep]
            return ([(i, t) for i, (p, t) in enumerate(split) if p == "relog.worker.1 (previous)"],
                    [(i, t) for i, (p, t) in enumerate(split) if p == "relog.worker.1"])

        def check(variant, lines, role):
            previous, new = runs(lines)
            shown = "".join(lines[-40:])
            self.assertEqual([t for _, t in previous if t.strip()], killed,
                             f"{variant}: the killed run's lines, marked as previous\n{shown}")
            self.assertTrue(any("starting" in t for _, t in new), f"{variant}: the new run's lines\n{shown}")
            self.assertLess(previous[-1][0], new[0][0], f"{variant}: the killed run first\n{shown}")
            if role:
                prefixes = {l.partition(" | ")[0].strip() for l in lines}
                self.assertLessEqual(prefixes, {"relog.worker.0", "relog.worker.1", "relog.worker.1 (previous)"},
                                     f"{variant}: only workers")

        for role in ((), ("--role", "worker")):
            with self.subTest(follow=False, role=role):
                r = dtr("logs", "relog", "-n", self.ns, *role)
                self.assertEqual(r.returncode, 0, r.stderr)
                check(f"logs {' '.join(role)}", r.stdout.splitlines(keepends=True), role)
            with self.subTest(follow=True, role=role):
                follow = DtrLogs(self.ns, "relog", *role)
                try:
                    wait_until("logs -f to reach worker-1's new run", lambda: any(
                        "starting" in t for _, t in runs(list(follow.lines))[1]), timeout=60)
                finally:
                    follow.stop()
                self.assertFalse(follow.errors, "".join(follow.errors))
                check(f"logs -f {' '.join(role)}", list(follow.lines), role)
        self.assertEqual(status()["restartCount"], 1, "worker-1 restarted once: its previous run is the killed one")

    def test_a_pod_the_kernel_kills_for_memory_comes_back_with_more_and_the_job_succeeds(self):
        # 200 MiB held: killed under 128Mi, fine under the 256Mi the first kill brings.
        template = realnode.on_real_node({"containers": [{
            "name": "tensorflow", "image": realnode.TF_EXAMPLE_IMAGE, "imagePullPolicy": "Never",
            "command": ["python3", "-c", "x = b'x' * (200 << 20); print('held', len(x) >> 20, 'MiB')"],
            "resources": {"limits": {"memory": "128Mi", "cpu": "500m"}}}]})
        apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "oom"},
               "spec": {"runPolicy": {"backoffLimit": 0, "oomPolicy": {"memoryFactor": 2, "maxMemory": "512Mi"}},
                        "replicaSpecs": {"Worker": {"replicas": 1, "restartPolicy": "ExitCode",
                                                    "template": {"spec": template}}}}}, self.ns)
        # Every version of the job's pods, through a watch: the killed one is deleted at once.
        watch = subprocess.Popen([os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "get", "pods",
                                  "-n", self.ns, "-l", "disttrain.io/job-name=oom", "-w", "-o", "json"],
                                 stdout=subprocess.PIPE, text=True)
        try:
            wait_until("the job to succeed", lambda: self.state("oom") in ("Succeeded", "Failed"), timeout=240)
        finally:
            watch.terminate()
        seen, text, decoder = [], watch.communicate(timeout=30)[0], json.JSONDecoder()
        while text.strip():
            try:
                obj, end = decoder.raw_decode(text.lstrip())
            except json.JSONDecodeError:
                break  # the object kubectl was writing when it was stopped (a CI run met one)
            text = text.lstrip()[end:]
            seen.extend(obj["items"] if obj.get("kind") == "List" else [obj])
        self.assertEqual(self.state("oom"), "Succeeded", get_json("dtr", "oom", "-n", self.ns)["status"])
        killed = next(p for p in seen if any(c.get("state", {}).get("terminated", {}).get("reason") == "OOMKilled"
                                             for c in p.get("status", {}).get("containerStatuses", [])))
        killed_at = next(c["state"]["terminated"]["finishedAt"] for c in killed["status"]["containerStatuses"])
        status = get_json("dtr", "oom", "-n", self.ns)["status"]
        resized = status["replicaStatuses"]["Worker"]["resized"]
        self.assertEqual([(r["index"], r["memory"], r["oomKills"]) for r in resized], [(0, "256Mi", 1)])
        self.assertEqual(status["replicaStatuses"]["Worker"]["restarts"], 0, "backoffLimit 0, and it succeeded")
        events = get_json("events", "-n", self.ns, "--field-selector",
                          "involvedObject.name=oom,reason=MemoryIncreased")["items"]
        self.assertEqual(len(events), 1)
        self.assertIn("was OOMKilled with 128Mi of memory; recreating it with 256Mi", events[0]["message"])
        again = self.pods("oom", "worker")
        self.assertEqual(len(again), 1)
        self.assertNotEqual(again[0]["metadata"]["uid"], killed["metadata"]["uid"])
        self.assertEqual(again[0]["spec"]["containers"][0]["resources"]["limits"]["memory"], "256Mi")
        started = again[0]["status"]["containerStatuses"][0]["state"]["terminated"]["startedAt"]
        parse = lambda t: datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")
        print(f"\nOOM kill at {killed_at}, running again with 256Mi at {started}: "
              f"{(parse(started) - parse(killed_at)).total_seconds():.0f} s", file=sys.stderr)

    def test_prometheus_answers_every_dashboard_panel_and_fires_the_alert_of_a_job_restarting(self):
        # Prometheus scrapes what the chart's PodMonitor (trainers) and ServiceMonitor (the operator)
        # select (prometheus_process.py: file_sd, Debian's build has no Kubernetes discovery), and
        # evaluates the shipped rules.
        manifest = helm("template", RELEASE, os.path.join(ROOT, "charts", "disttrain"), "-n", OPERATOR_NS,
                        "--set", "podMonitor.enabled=true", "--set", "serviceMonitor.enabled=true")
        self.assertEqual(manifest.returncode, 0, manifest.stderr)
        monitors = {d["kind"]: d for d in yaml.safe_load_all(manifest.stdout) if d}
        pod_monitor, service_monitor = monitors["PodMonitor"], monitors["ServiceMonitor"]
        prom = PrometheusProcess(
            {"trainers": (pod_monitor["spec"]["podMetricsEndpoints"][0]["path"],
                          lambda: pod_monitor_targets(pod_monitor, self.ns)),
             "operator": (service_monitor["spec"]["endpoints"][0]["path"],
                          lambda: service_monitor_targets(service_monitor, OPERATOR_NS))},
            rule_files=[os.path.join(ROOT, "deploy", "prometheus", "disttrain-alerts.yaml")])
        prom.start()
        try:
            apply(training_job("dash", shared_dir(), steps=1_000_000, ps=1, workers=1, checkpoint_steps=50), self.ns)
            # A worker that dies with a retryable code (137) every 2 s: recreated, and counted, each time.
            crash = realnode.on_real_node({"containers": [{
                "name": "tensorflow", "image": realnode.TF_EXAMPLE_IMAGE, "imagePullPolicy": "Never",
                "command": ["python3", "-c", "import os, time; time.sleep(2); os._exit(137)"]}]})
            apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "crashy"},
                   "spec": {"runPolicy": {"backoffLimit": 50},
                            "replicaSpecs": {"Worker": {"replicas": 1, "restartPolicy": "ExitCode",
                                                        "template": {"spec": crash}}}}}, self.ns)
            with open(os.path.join(ROOT, "deploy", "grafana", "disttrain-dashboard.json")) as f:
                dashboard = json.load(f)
            values = {"$namespace": self.ns, "$job": "dash", "$operator_namespace": OPERATOR_NS}

            def fill(expr):
                for k, v in values.items():
                    expr = expr.replace(k, v)
                return expr
            panels = [(p["title"], fill(t["expr"])) for p in dashboard["panels"] for t in p.get("targets", [])]
            self.assertGreaterEqual(len(panels), 15)
            unanswered = list(panels)

            def every_panel_answers():
                unanswered[:] = [(title, e) for title, e in unanswered if not prom.query(e)]
                return not unanswered
            try:
                wait_until("every dashboard panel's query to return a number", every_panel_answers,
                           timeout=300, interval=2)
            except AssertionError as e:
                up = [(t["labels"].get("pod"), t["health"], t.get("lastError")) for t in prom.targets()]
                raise AssertionError(f"{e}\nno data: {unanswered}\ntargets: {up}\n"
                                     f"target listing errors: {prom.discovery.errors[-3:]}") from None
            # The dashboard's variables list this job, its namespace and the operator's namespace.
            pods = prom.api("label/pod/values", **{"match[]": f'disttrain_trainer_global_step{{namespace="{self.ns}"}}'})
            job_regex = next(v for v in dashboard["templating"]["list"] if v["name"] == "job")["regex"].strip("/")
            self.assertIn("dash", {m.group(1) for p in pods if (m := re.match(job_regex, p))})
            self.assertIn(self.ns, prom.api("label/namespace/values",
                                            **{"match[]": "disttrain_trainer_global_step"}))
            self.assertIn(OPERATOR_NS, prom.api("label/namespace/values",
                                                **{"match[]": "controller_runtime_reconcile_total"}))

            def firing():
                return [a for a in prom.alerts() if a["state"] == "firing" and
                        a["labels"].get("alertname") == "DisttrainJobRestartingRepeatedly"]
            alerts = wait_until("DisttrainJobRestartingRepeatedly to fire", firing, timeout=180, interval=2)
            self.assertEqual([(a["labels"]["job_namespace"], a["labels"]["job_name"], a["labels"]["kind"])
                              for a in alerts], [(self.ns, "crashy", "DistributedTraining")])
            self.assertRegex(alerts[0]["annotations"]["summary"],
                             rf"DistributedTraining {self.ns}/crashy restarted about \d+ times in 30 minutes")
            restarts = get_json("dtr", "crashy", "-n", self.ns)["status"]["replicaStatuses"]["Worker"]["restarts"]
            self.assertGreaterEqual(restarts, 3)
            print(f"\n{len(panels)} dashboard queries answered; alert fired at {restarts} restarts: "
                  f"{alerts[0]['annotations']['summary']}", file=sys.stderr)
        finally:
            prom.stop()

    def test_an_image_the_kubelet_cannot_pull_is_why_the_job_waits(self):
        template = trainer_template(["--model=toy", "--steps=10"])
        container = template["spec"]["containers"][0]
        container["image"], container["imagePullPolicy"] = "registry.invalid/disttrain/none:1", "IfNotPresent"
        apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "nopull"},
               "spec": {"replicaSpecs": {"Worker": {"replicas": 1, "template": template}}}}, self.ns)

        def waiting():
            for c in get_json("dtr", "nopull", "-n", self.ns).get("status", {}).get("conditions", []):
                if c["type"] == "Waiting" and c["status"] == "True":
                    return c
            return None
        cond = wait_until("condition Waiting", waiting, timeout=120)
        self.assertIn(cond["reason"], ("ErrImagePull", "ImagePullBackOff"))
        self.assertIn("pod nopull-worker-0: ", cond["message"])
        self.assertIn("registry.invalid/disttrain/none:1", cond["message"])
        self.assertNotIn(self.state("nopull"), ("Running", "Failed"))
        kubectl("delete", "dtr", "nopull", "-n", self.ns, "--wait=false")

    def test_a_chief_that_exits_non_zero_fails_the_job_and_the_servers_are_gone(self):
        model_dir = shared_dir()
        # A negative learning rate is refused by the trainer: the chief exits 2 (a permanent code).
        apply(training_job("crash", model_dir, chief_args=["--learning-rate=-1"]), self.ns)
        self.wait_running("crash-ps-0")
        ids = wait_until("the servers' containers", lambda: len(
            i := [c for p in self.pods("crash", "ps") for c in realnode.container_ids(p)]) == 2 and i, timeout=120)
        wait_until("the job to fail", lambda: self.state("crash") == "Failed", timeout=180)
        failed = [c for c in get_json("dtr", "crash", "-n", self.ns)["status"]["conditions"] if c["type"] == "Failed"]
        self.assertIn("exited with code 2", failed[0]["message"])
        wait_until("ps pods to be deleted", lambda: not self.pods("crash", "ps"), timeout=60)
        wait_until("their processes to end", lambda: not set(ids) & realnode.running_task_ids(), timeout=60)

    def test_real_tensorflow_parameter_server_training_succeeds_and_its_servers_are_torn_down(self):
        model_dir = shared_dir()

        def role(n, policy):
            template = trainer_template(["--model-dir=/model", "--epochs=3", "--steps-per-epoch=300"], model_dir)
            template["spec"]["containers"][0]["image"] = realnode.TF_EXAMPLE_IMAGE
            return {"replicas": n, "restartPolicy": policy, "template": template}
        # TF2's coordinator connects to every task of `cluster`: the evaluator stays out of it.
        apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "tf"},
               "spec": {"tfConfig": {"evaluatorInCluster": False},
                        "replicaSpecs": {"Chief": role(1, "ExitCode"), "PS": role(2, "OnFailure"),
                                         "Worker": role(2, "OnFailure"), "Evaluator": role(1, "OnFailure")}}}, self.ns)
        self.wait_running("tf-evaluator-0", timeout=300)
        evaluator = LogFollower(self.ns, "tf-evaluator-0")
        ps0 = None
        try:
            ps = wait_until("the parameter servers to run", lambda: len(
                p := [x for x in self.pods("tf", "ps") if x["status"].get("phase") == "Running"]) == 2 and p, timeout=300)
            ids = [i for p in ps for i in realnode.container_ids(p)]
            # Followed rather than waited for: six processes importing TensorFlow on 2 busy cores took over
            # 120 s to serve in a CI run; the job's own deadline below covers them.
            ps0 = LogFollower(self.ns, "tf-ps-0")
            wait_until("the job to finish", lambda: self.state("tf") in ("Succeeded", "Failed"), timeout=900)
            chief_log = kubectl("logs", "-n", self.ns, "tf-chief-0").stdout
            self.assertEqual(self.state("tf"), "Succeeded", chief_log[-3000:])
            self.assertIn("blocking in join()", ps0.text(), "ps 0 served TensorFlow's own server")
        finally:
            evaluator.stop()
            if ps0:
                ps0.stop()
        done = realnode.events_in(chief_log, "done")
        self.assertTrue(done, chief_log[-2000:])
        print(f"TensorFlow ParameterServerStrategy: accuracy {done[0]['accuracy']:.4f}; sidecar evaluations: "
              f"{[round(e['accuracy'], 4) for e in realnode.events_in(evaluator.text(), 'eval')]}")
        self.assertGreaterEqual(done[0]["accuracy"], 0.80)
        self.assertTrue(realnode.events_in(evaluator.text(), "eval"), "the sidecar evaluator evaluated a checkpoint")
        # The servers never exit by themselves (join()); the operator stopped them.
        wait_until("ps and worker pods to be deleted", lambda: not self.pods("tf", "ps") and
                   not self.pods("tf", "worker"), timeout=90)
        wait_until("their processes to end", lambda: not set(ids) & realnode.running_task_ids(), timeout=60)

    def test_kubeflows_keras_multi_worker_example_converted_runs_with_its_tensorboard_callback(self):
        # The converted TFJob as shipped in examples/, with only the hostPath moved under build/. Its script
        # uses tf.keras.callbacks.TensorBoard, which failed at once (TBNotInstalledError) before the example
        # image carried TensorBoard.
        manifest = json.loads(kubectl("create", "--dry-run=client", "-o", "json", "-f",
                                      os.path.join(ROOT, "examples", "tensorflow", "multi-worker-keras.yaml")).stdout)
        manifest["metadata"].pop("namespace", None)  # the client-side dry run fills in "default"
        train_dir = shared_dir()
        template = manifest["spec"]["replicaSpecs"]["Worker"]["template"]
        template["spec"]["volumes"][0]["hostPath"]["path"] = train_dir
        template["spec"]["containers"][0]["imagePullPolicy"] = "Never"
        apply(manifest, self.ns)
        wait_until("the job to finish", lambda: self.state("multi-worker") in ("Succeeded", "Failed"), timeout=600)
        logs = {i: kubectl("logs", "-n", self.ns, f"multi-worker-worker-{i}").stdout for i in (0, 1)}
        self.assertEqual(self.state("multi-worker"), "Succeeded", logs[0][-3000:])
        done = [realnode.events_in(logs[i], "done") for i in (0, 1)]
        self.assertEqual([len(d) for d in done], [1, 1], logs)
        print(f"Keras MultiWorkerMirroredStrategy, 2 workers: accuracy {done[0][0]['accuracy']:.4f}")
        self.assertGreater(done[0][0]["accuracy"], 0.6)
        # Its worker 0 serves the trainer's progress gauges (examples/tensorflow/disttrain_progress.py).
        progress = get_json("dtr", "multi-worker", "-n", self.ns)["status"].get("progress", {})
        self.assertEqual(progress.get("targetSteps"), 200, progress)
        self.assertGreater(progress.get("globalStep", 0), 0, progress)
        # TensorBoard's own reader (the tests' venv) finds worker 0's epoch scalars.
        venv = subprocess.run([os.path.join(ROOT, "tests", "python", "venv.sh")], capture_output=True, text=True,
                              check=True).stdout.strip()
        read = subprocess.run([os.path.join(venv, "bin", "python"), "-c", (
            "import sys; from tensorboard.backend.event_processing import event_accumulator as ea\n"
            "acc = ea.EventAccumulator(sys.argv[1], size_guidance={ea.TENSORS: 0}); acc.Reload()\n"
            "print(sorted(acc.Tags()['tensors']))"), os.path.join(train_dir, "logs", "train")],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(read.returncode, 0, read.stderr)
        self.assertIn("epoch_loss", read.stdout, f"tags in the event files: {read.stdout}")


if __name__ == "__main__":
    realnode.exit_unless_up()
    unittest.main()
