"""Every TF_CONFIG that `disttrain-operator render` writes, fed to real TensorFlow's own parsers.

TensorFlow (tensorflow-cpu from PyPI, in the venv of tests/python/venv.sh) must read the same
cluster, task type and index the operator meant, and its notion of the chief
(`multi_worker_util.is_chief`) must be the task the operator labels `disttrain.io/job-role=chief`.
"""
import copy
import json
import os
import subprocess
import unittest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
from tensorflow.python.distribute import multi_worker_util  # noqa: E402
from tensorflow.python.distribute.cluster_resolver import TFConfigClusterResolver  # noqa: E402

BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(os.path.dirname(__file__), "../../build/bin"))
ROLE_KEYS = {"Chief": "chief", "PS": "ps", "Worker": "worker", "Evaluator": "evaluator"}


def container(name="tensorflow", port=None):
    c = {"name": name, "image": "trainer:1"}
    if port is not None:
        c["ports"] = [{"name": "tfjob-port", "containerPort": port}]
    return c


def job(name, namespace="default", evaluator_in_cluster=None, **roles):
    """roles: Role=replicas, or Role=(replicas, [containers])."""
    specs = {}
    for role, v in roles.items():
        n, containers = (v, [container()]) if isinstance(v, int) else v
        specs[role] = {"replicas": n, "template": {"spec": {"containers": containers}}}
    m = {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
         "metadata": {"name": name, "namespace": namespace}, "spec": {"replicaSpecs": specs}}
    if evaluator_in_cluster is not None:
        m["spec"]["tfConfig"] = {"evaluatorInCluster": evaluator_in_cluster}
    return m


def sidecar_first(port):
    return [{"name": "proxy", "image": "proxy:1", "ports": [{"name": "tfjob-port", "containerPort": 9}]},
            container("tensorflow", port)]


# (name, manifest, extra render flags)
JOBS = [
    ("chief ps workers evaluator", job("full", Chief=1, PS=2, Worker=3, Evaluator=1), []),
    ("evaluator out of cluster", job("evout", evaluator_in_cluster=False, Chief=1, PS=2, Worker=2, Evaluator=1), []),
    ("evaluator in cluster", job("evin", evaluator_in_cluster=True, Chief=1, PS=2, Worker=2, Evaluator=1), []),
    ("no chief", job("nochief", PS=2, Worker=3), []),
    ("zero-replica chief", job("zchief", Chief=0, PS=2, Worker=2), []),
    ("zero-replica ps", job("zps", Chief=1, PS=0, Worker=2), []),
    ("zero-replica workers", job("zworker", Chief=1, PS=1, Worker=0), []),
    ("zero-replica evaluator in cluster",
     job("zeval", evaluator_in_cluster=True, Chief=1, Worker=1, Evaluator=0), []),
    ("zero chief and zero ps", job("zz", Chief=0, PS=0, Worker=3), []),
    ("worker and evaluator in cluster", job("we", Worker=1, Evaluator=1), []),
    ("worker and evaluator out of cluster", job("weo", evaluator_in_cluster=False, Worker=1, Evaluator=1), []),
    ("custom ports with sidecars first",
     job("ports", Chief=(1, sidecar_first(3000)), PS=(2, sidecar_first(3001)),
         Worker=(2, [container("trainer", 3002), container("log", None)]), Evaluator=(1, sidecar_first(3003))), []),
    ("other namespace and cluster domain", job("dom", namespace="team-a", Chief=1, PS=1, Worker=2),
     ["--cluster-domain", "cluster.local"]),
    ("single replica", job("single", Worker=1), []),
    ("single chief with zero workers", job("lone", Chief=1, Worker=0, PS=0), []),
]


def render(manifest, flags):
    r = subprocess.run([os.path.join(BIN, "disttrain-operator"), "render", "-f", "-", "-o", "json", *flags],
                       input=json.dumps(manifest), capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError(f"render failed: {r.stderr}")
    return json.loads(r.stdout)["items"]


def main_container(pod):
    cs = pod["spec"]["containers"]
    return next((c for c in cs if c["name"] in ("tensorflow", "trainer")), cs[0])


def expected_port(manifest, role):
    c = main_container(manifest["spec"]["replicaSpecs"][role]["template"])
    for p in c.get("ports", []):
        if p.get("name") == "tfjob-port":
            return p["containerPort"]
    return 2222


def expected_cluster(manifest, domain):
    """The cluster TensorFlow should see, computed here independently of the operator."""
    name, ns = manifest["metadata"]["name"], manifest["metadata"]["namespace"]
    in_cluster = manifest["spec"].get("tfConfig", {}).get("evaluatorInCluster", True)  # the API's default
    cluster = {}
    for role, spec in manifest["spec"]["replicaSpecs"].items():
        if spec["replicas"] == 0 or (role == "Evaluator" and not in_cluster):
            continue
        key = ROLE_KEYS[role]
        suffix = f".{domain}" if domain else ""
        # A DistributedTraining's pods resolve through the job's headless Service: <pod>.<job>.<ns>.svc
        cluster[key] = [f"{name}-{key}-{i}.{name}.{ns}.svc{suffix}:{expected_port(manifest, role)}"
                        for i in range(spec["replicas"])]
    return cluster


class TfConfigUnderTensorFlowTest(unittest.TestCase):
    def tearDown(self):
        os.environ.pop("TF_CONFIG", None)

    def pods(self, manifest, flags):
        return [o for o in render(manifest, flags) if o["kind"] == "Pod"]

    def test_tensorflow_reads_the_cluster_and_task_the_operator_meant(self):
        for name, manifest, flags in JOBS:
            domain = flags[1] if flags else ""
            want = expected_cluster(manifest, domain)
            total = sum(s["replicas"] for s in manifest["spec"]["replicaSpecs"].values())
            for pod in self.pods(manifest, flags):
                labels = pod["metadata"]["labels"]
                role, index = labels["disttrain.io/replica-type"], int(labels["disttrain.io/replica-index"])
                env = {e["name"]: e.get("value") for e in main_container(pod).get("env", [])}
                with self.subTest(job=name, pod=pod["metadata"]["name"]):
                    if total == 1:
                        self.assertNotIn("TF_CONFIG", env, "a one-replica job must not get TF_CONFIG")
                        continue
                    self.assertIn("TF_CONFIG", env)
                    os.environ["TF_CONFIG"] = env["TF_CONFIG"]
                    resolver = TFConfigClusterResolver()
                    spec = resolver.cluster_spec()
                    self.assertEqual(spec.as_dict(), want)
                    self.assertEqual(resolver.task_type, role)
                    self.assertEqual(resolver.task_id, index)
                    # tf.train.ClusterSpec from the raw JSON: every job it names has tasks.
                    raw = json.loads(env["TF_CONFIG"])["cluster"]
                    tf_spec = tf.train.ClusterSpec(raw)
                    for job_name in tf_spec.jobs:
                        self.assertGreater(tf_spec.num_tasks(job_name), 0, f"empty role {job_name}")
                    self.assertEqual(sorted(tf_spec.jobs), sorted(want))

    def test_tensorflow_agrees_with_the_operator_on_the_chief(self):
        for name, manifest, flags in JOBS:
            pods = self.pods(manifest, flags)
            training = []
            for pod in pods:
                labels = pod["metadata"]["labels"]
                role, index = labels["disttrain.io/replica-type"], int(labels["disttrain.io/replica-index"])
                env = {e["name"]: e.get("value") for e in main_container(pod).get("env", [])}
                if "TF_CONFIG" not in env:
                    continue
                spec = json.loads(env["TF_CONFIG"])["cluster"]
                with self.subTest(job=name, pod=pod["metadata"]["name"]):
                    if role == "evaluator":
                        # TensorFlow makes the evaluator its own chief, in or out of `cluster`;
                        # the operator's chief is a training task. TF must accept this view.
                        multi_worker_util._validate_cluster_spec(tf.train.ClusterSpec(spec), role, index)
                        self.assertTrue(multi_worker_util.is_chief(spec, role, index))
                        self.assertNotEqual(labels.get("disttrain.io/job-role"), "chief")
                        continue
                    multi_worker_util._validate_cluster_spec(tf.train.ClusterSpec(spec), role, index)
                    tf_chief = multi_worker_util.is_chief(spec, role, index)
                    ours = labels.get("disttrain.io/job-role") == "chief"
                    self.assertEqual(tf_chief, ours, f"TensorFlow says chief={tf_chief}, the operator {ours}")
                    if role in ("chief", "worker"):
                        workers = sum(len(spec.get(r, [])) for r in ("chief", "worker"))
                        self.assertEqual(multi_worker_util.worker_count(spec, role), workers)
                        ids = multi_worker_util.id_in_cluster(spec, role, index)
                        training.append((ids, ours))
            if training:
                with self.subTest(job=name, check="one chief, distinct ids"):
                    self.assertEqual(sum(1 for _, chief in training if chief), 1)
                    ids = sorted(i for i, _ in training)
                    self.assertEqual(ids, list(range(len(ids))))
                    self.assertTrue(dict(training)[0], "TensorFlow's id 0 must be the operator's chief")


if __name__ == "__main__":
    unittest.main()
