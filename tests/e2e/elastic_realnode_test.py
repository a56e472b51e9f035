"""Workers scaled in and out of a running synchronous trainer job on the local cluster's real node
(issue #37): `kubectl scale` adds worker-1 to a job of a chief, a parameter server and worker-0, then
takes it away. The parameter server aggregates one gradient per live replica (its log says when
worker-1 joined with its first push and when it left on SIGTERM), the global step keeps going at
every stage, no container of the chief, the server or worker-0 is restarted, and the job then
trains to its end and succeeds. A hogwild job goes from 1 to 3 workers and back the same way. The
same with real TensorFlow's own between-graph training
under a sparse TF_CONFIG: a worker scaled in trains on the running job's variables.

Without a real node it exits 77, which ctest reports as not run."""
import time
import unittest

import realnode
from crd_test import install_crd
from kube import Namespace, apply, get_json, kubectl, wait_until
from operator_process import OperatorProcess

OPERATOR = None
STEPS = 30000  # outlasts both scale events: about a minute at the 500-600 steps/s measured here
HOGWILD_STEPS = 60000  # asynchronous steps come faster: every replica's commit is one
TF_STEPS = 30000  # TensorFlow's between-graph example: a minute or more here


def setUpModule():
    global OPERATOR
    realnode.exit_unless_up()
    install_crd()
    OPERATOR = OperatorProcess("elastic-real").start()


def tearDownModule():
    if OPERATOR is not None:
        OPERATOR.stop()


def role(replicas, mode="sync", steps=STEPS):
    container = {"name": "tensorflow", "image": realnode.TRAINER_IMAGE, "imagePullPolicy": "Never",
                 "args": ["--model=mlp", f"--mode={mode}", "--batch-size=32", f"--steps={steps}", "--log-every=100"]}
    return {"replicas": replicas, "restartPolicy": "OnFailure",
            "template": {"spec": realnode.on_real_node({"containers": [container]})}}


class ElasticRealNodeTest(unittest.TestCase):
    def test_a_sync_job_takes_a_worker_and_gives_it_back_restarting_nothing(self):
        with Namespace("elastic-real") as ns:
            apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "grow"},
                   "spec": {"replicaSpecs": {"Chief": role(1), "PS": role(1), "Worker": role(1)}}}, ns)

            def log(pod):
                return kubectl("logs", "-n", ns, pod, check=False).stdout

            def step():
                steps = realnode.events_in(log("grow-chief-0"), "step")
                return steps[-1]["global_step"] if steps else -1

            rates = {}

            def advances(what, replicas, by=1000):
                # Training goes on; its rate at this size (steps of `replicas` gradients of 32).
                start, began = step(), time.monotonic()
                wait_until(f"{by} more steps {what} (from {start})", lambda: step() >= start + by, timeout=120)
                end, took = step(), time.monotonic() - began
                rates[what] = (end - start) / took
                print(f"{what}: {rates[what]:.0f} steps/s, {rates[what] * replicas * 32:.0f} examples/s",
                      flush=True)

            def pods():
                return {p["metadata"]["name"]: p for p in get_json("pods", "-n", ns)["items"]}

            advances("chief + 1 worker", 2)
            kept = {n: realnode.container_ids(p) for n, p in pods().items()}
            self.assertEqual(set(kept), {"grow-chief-0", "grow-ps-0", "grow-worker-0"})
            self.assertIn("mode=sync replicas_to_aggregate=2", log("grow-ps-0"))  # as TF_CONFIG listed

            scaled = time.monotonic()
            kubectl("scale", "dtr/grow", "--replicas", "2", "-n", ns)
            wait_until("worker-1's first push", lambda: '"a training replica joined" replica=worker-1 live_replicas=3 '
                       'replicas_to_aggregate=3' in log("grow-ps-0"), timeout=120)
            print(f"kubectl scale to worker-1's first push: {time.monotonic() - scaled:.1f} s", flush=True)
            advances("chief + 2 workers", 3)
            wait_until("worker-1's own step events", lambda: realnode.events_in(log("grow-worker-1"), "step"),
                       timeout=60)

            kubectl("scale", "dtr/grow", "--replicas", "1", "-n", ns)
            wait_until("worker-1 to leave", lambda: '"a training replica left" replica=worker-1 live_replicas=2 '
                       'replicas_to_aggregate=2' in log("grow-ps-0"), timeout=120)
            advances("chief + 1 worker again", 2)
            self.assertEqual({n: realnode.container_ids(p) for n, p in pods().items()
                              if not p["metadata"].get("deletionTimestamp")}, kept, "nothing was restarted")
            print(f"global step {step()} of {STEPS} after both scale events", flush=True)

            wait_until("the job to succeed", lambda: get_json("dtr", "grow", "-n", ns).get(
                "status", {}).get("state") == "Succeeded", timeout=600)
            status = get_json("dtr", "grow", "-n", ns)["status"]
            self.assertEqual(sum(r.get("restarts", 0) for r in status["replicaStatuses"].values()), 0)
            done = realnode.events_in(log("grow-chief-0"), "done")
            self.assertEqual(done[-1]["global_step"], STEPS)
            self.assertGreaterEqual(done[-1]["train_accuracy"], 0.8, done[-1])

    def test_a_hogwild_job_takes_two_workers_and_gives_them_back(self):
        # Asynchronous: every push is applied, so workers scaled in train at once and those
        # scaled away simply stop; the global step counts every replica's commits.
        with Namespace("elastic-hog") as ns:
            apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "hog"},
                   "spec": {"replicaSpecs": {r: role(n, "hogwild", HOGWILD_STEPS)
                                             for r, n in (("Chief", 1), ("PS", 1), ("Worker", 1))}}}, ns)

            def log(pod):
                return kubectl("logs", "-n", ns, pod, check=False).stdout

            def step():
                steps = realnode.events_in(log("hog-chief-0"), "step")
                return steps[-1]["global_step"] if steps else -1

            def pods():
                return {p["metadata"]["name"]: p for p in get_json("pods", "-n", ns)["items"]
                        if not p["metadata"].get("deletionTimestamp")}

            def advances(what, by=3000):
                start, began = step(), time.monotonic()
                wait_until(f"{by} more steps {what} (from {start})", lambda: step() >= start + by, timeout=120)
                rate = (step() - start) / (time.monotonic() - began)
                print(f"hogwild, {what}: {rate:.0f} steps/s, {rate * 32:.0f} examples/s", flush=True)

            advances("chief + 1 worker")
            kept = {n: realnode.container_ids(p) for n, p in pods().items()}
            kubectl("scale", "dtr/hog", "--replicas", "3", "-n", ns)
            for w in ("hog-worker-1", "hog-worker-2"):
                wait_until(f"{w}'s own step events", lambda: realnode.events_in(log(w), "step"), timeout=120)
            advances("chief + 3 workers")
            kubectl("scale", "dtr/hog", "--replicas", "1", "-n", ns)
            wait_until("workers 1 and 2 gone", lambda: set(pods()) == set(kept), timeout=120)
            advances("chief + 1 worker again")
            self.assertEqual({n: realnode.container_ids(p) for n, p in pods().items()}, kept, "nothing was restarted")
            wait_until("the job to succeed", lambda: get_json("dtr", "hog", "-n", ns).get(
                "status", {}).get("state") == "Succeeded", timeout=600)
            status = get_json("dtr", "hog", "-n", ns)["status"]
            self.assertEqual(sum(r.get("restarts", 0) for r in status["replicaStatuses"].values()), 0)
            done = realnode.events_in(log("hog-chief-0"), "done")
            self.assertGreaterEqual(done[-1]["global_step"], HOGWILD_STEPS)
            self.assertGreaterEqual(done[-1]["train_accuracy"], 0.8, done[-1])

    def test_a_worker_scaled_into_tensorflows_own_training_trains(self):
        # Real TensorFlow (examples/tensorflow/between_graph.py: tf.compat.v1 between-graph
        # training, variables on the parameter server) with tfConfig.sparseWorkers: each worker's
        # TF_CONFIG names the ps and itself, the ps's every worker up to elasticPolicy.maxReplicas.
        # Scaled from 1 to 2 workers, the new one trains on the shared variables at once.
        def tf_role(replicas, policy):
            container = {"name": "tensorflow", "image": realnode.TF_EXAMPLE_IMAGE, "imagePullPolicy": "Never",
                         "command": ["python3", "/opt/example/between_graph.py"],
                         "args": [f"--steps={TF_STEPS}", "--log-every=200"]}
            return {"replicas": replicas, "restartPolicy": policy,
                    "template": {"spec": realnode.on_real_node({"containers": [container]})}}
        with Namespace("elastic-tf") as ns:
            apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": "tfgrow"},
                   "spec": {"tfConfig": {"sparseWorkers": True}, "elasticPolicy": {"minReplicas": 1, "maxReplicas": 2},
                            "replicaSpecs": {"PS": tf_role(1, "OnFailure"), "Worker": tf_role(1, "OnFailure")}}}, ns)

            def steps(pod):
                return realnode.events_in(kubectl("logs", "-n", ns, pod, check=False).stdout, "step")

            wait_until("worker-0 past global step 1000", lambda: any(
                e["global_step"] >= 1000 for e in steps("tfgrow-worker-0")), timeout=300)
            kept = {p["metadata"]["name"]: realnode.container_ids(p) for p in get_json("pods", "-n", ns)["items"]}
            scaled = time.monotonic()
            kubectl("scale", "dtr/tfgrow", "--replicas", "2", "-n", ns)
            first = wait_until("worker-1's first step", lambda: steps("tfgrow-worker-1"), timeout=180)[0]
            print(f"kubectl scale to TensorFlow worker-1's first step: {time.monotonic() - scaled:.1f} s, "
                  f"at global step {first['global_step']}", flush=True)
            self.assertGreaterEqual(first["global_step"], 1000, "it joined the running job")
            wait_until("worker-1 trained 1000 steps", lambda: any(
                e["local_steps"] >= 1000 for e in steps("tfgrow-worker-1")), timeout=180)
            final = wait_until("the job to finish", lambda: (j := get_json("dtr", "tfgrow", "-n", ns)).get(
                "status", {}).get("state") in ("Succeeded", "Failed") and j, timeout=300)
            self.assertEqual(final["status"]["state"], "Succeeded", final["status"])
            done = realnode.events_in(kubectl("logs", "-n", ns, "tfgrow-worker-0", check=False).stdout, "done")
            self.assertTrue(done)
            print(f"TensorFlow with a worker scaled in: accuracy {done[0]['accuracy']:.3f}", flush=True)
            self.assertGreater(done[0]["accuracy"], 0.7)
            self.assertEqual(sum(r.get("restarts", 0) for r in final["status"]["replicaStatuses"].values()), 0)
            self.assertEqual(kept["tfgrow-worker-0"], realnode.container_ids(
                get_json("pod", "tfgrow-worker-0", "-n", ns)), "worker-0 was restarted")


if __name__ == "__main__":
    unittest.main()
