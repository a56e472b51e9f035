"""A worker added to a running real TensorFlow job trains (issue #37), under the TF_CONFIGs that
`disttrain-operator render` writes for a job with spec.tfConfig.sparseWorkers and an
elasticPolicy: first the job's parameter server and worker 0, then, as after `kubectl scale
--replicas 2`, worker 1 with the TF_CONFIG the operator gives the new pod. TensorFlow is
tensorflow-cpu from the venv, running examples/tensorflow/between_graph.py (tf.compat.v1
between-graph training, variables on the parameter server), on loopback: each host of the
rendered TF_CONFIGs is mapped to a free local port.

Seen failing before the fix of the ps's sparse TF_CONFIG (it named the ps only, as the
training-operator's does): the ps cannot take worker 1's gradients ("No worker known as
/job:worker/replica:0/task:1") and worker 1 exits 1."""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(HERE, "../../build/bin"))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "tensorflow", "between_graph.py")
STEPS = 4000


def job(workers):
    return {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
            "metadata": {"name": "dyn", "namespace": "default"},
            "spec": {"elasticPolicy": {"minReplicas": 1, "maxReplicas": 2}, "tfConfig": {"sparseWorkers": True},
                     "replicaSpecs": {role: {"replicas": n, "template": {"spec": {"containers": [
                         {"name": "tensorflow", "image": "tf:1"}]}}} for role, n in (("PS", 1), ("Worker", workers))}}}


def tf_configs(workers):
    """{pod name: TF_CONFIG} as the operator renders them."""
    r = subprocess.run([os.path.join(BIN, "disttrain-operator"), "render", "-f", "-", "-o", "json"],
                       input=json.dumps(job(workers)), capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError(f"render failed: {r.stderr}")
    out = {}
    for o in json.loads(r.stdout)["items"]:
        if o["kind"] == "Pod":
            env = {e["name"]: e.get("value") for e in o["spec"]["containers"][0].get("env", [])}
            out[o["metadata"]["name"]] = env["TF_CONFIG"]
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Task:
    def __init__(self, name, tf_config, ports):
        # Each in-cluster host:port becomes a loopback port, the same for every TF_CONFIG.
        local = re.sub(r'[a-z0-9.-]+\.svc:2222', lambda m: f"127.0.0.1:{ports.setdefault(m.group(0), free_port())}",
                       tf_config)
        self.name, self.lines, self.err = name, [], []
        self.proc = subprocess.Popen([sys.executable, EXAMPLE, "--steps", str(STEPS), "--log-every", "100"],
                                     env=dict(os.environ, TF_CONFIG=local), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()

    def events(self, kind):
        return [e for e in (json.loads(l) for l in list(self.lines) if l.startswith("{")) if e["event"] == kind]

    def tail(self):
        return "".join(self.err[-15:])


class DynamicWorkersTest(unittest.TestCase):
    def test_a_worker_scaled_into_a_running_tensorflow_job_trains(self):
        before, after = tf_configs(1), tf_configs(2)
        self.assertEqual(before["dyn-ps-0"], after["dyn-ps-0"], "the ps's TF_CONFIG does not change with the scale")
        self.assertEqual(before["dyn-worker-0"], after["dyn-worker-0"])
        ports = {}
        ps = Task("ps-0", before["dyn-ps-0"], ports)
        workers = [Task("worker-0", before["dyn-worker-0"], ports)]
        try:
            deadline = time.monotonic() + 120
            while not any(e["global_step"] >= 500 for e in workers[0].events("step")):
                self.assertIsNone(workers[0].proc.poll(), workers[0].tail())
                self.assertLess(time.monotonic(), deadline, "worker 0 never reached step 500")
                time.sleep(0.1)
            workers.append(Task("worker-1", after["dyn-worker-1"], ports))  # kubectl scale --replicas 2
            for w in workers:
                self.assertEqual(w.proc.wait(timeout=300), 0, f"{w.name}: {w.tail()}")
        finally:
            for t in [ps, *workers]:
                if t.proc.poll() is None:
                    t.proc.kill()
                    t.proc.wait()
        steps = workers[1].events("step")
        done = {w.name: w.events("done")[0] for w in workers}
        print(f"worker-1 joined at global step {steps[0]['global_step']} and ran {done['worker-1']['local_steps']} "
              f"of the {STEPS} steps; accuracy {done['worker-0']['accuracy']:.3f}", flush=True)
        self.assertGreaterEqual(steps[0]["global_step"], 500, "it joined a running job")
        self.assertGreaterEqual(done["worker-1"]["local_steps"], 100, "it trained")
        globals_seen = [e["global_step"] for e in steps]
        self.assertEqual(globals_seen, sorted(globals_seen))
        self.assertGreater(done["worker-0"]["accuracy"], 0.7)
        for w in workers:  # the shared step once training stopped
            self.assertGreaterEqual(done[w.name]["global_step"], STEPS, w.name)


if __name__ == "__main__":
    unittest.main()
