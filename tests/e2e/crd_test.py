"""The DistributedTraining API in a real API server: the CRD installs, defaults apply, invalid
manifests are rejected with messages that name the field, `kubectl explain` teaches, and the
objects `disttrain-operator render` prints are accepted by the API server.

The C++ validation (used by render) must agree with the API server: every invalid case here is
also checked against render.
"""
import copy
import json
import os
import subprocess
import unittest

from kube import BIN, ROOT, Namespace, apply, get_json, kubectl, wait_established

CRD = os.path.join(ROOT, "crds", "disttrain.io_distributedtrainings.yaml")


def container(name="tensorflow"):
    return {"name": name, "image": "registry.example/trainer:1"}


def job(name="dist", **roles):
    """A job with the given roles, e.g. job(Chief=1, PS=2, Worker=3)."""
    return {
        "apiVersion": "disttrain.io/v1",
        "kind": "DistributedTraining",
        "metadata": {"name": name},
        "spec": {"replicaSpecs": {
            role: {"replicas": n, "template": {"spec": {"containers": [container()]}}}
            for role, n in roles.items()}},
    }


def render(manifest, *args):
    return subprocess.run([os.path.join(BIN, "disttrain-operator"), "render", "-f", "-", *args],
                          input=json.dumps(manifest), capture_output=True, text=True, timeout=30)


def install_crd(kubeconfig=None):
    kubectl("apply", "-f", CRD, kubeconfig=kubeconfig)
    wait_established("crd/distributedtrainings.disttrain.io", kubeconfig)


class CrdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        install_crd()
        cls.ns_ctx = Namespace("crd")
        cls.ns = cls.ns_ctx.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.ns_ctx.__exit__(None, None, None)

    def dry_run(self, manifest):
        return kubectl("apply", "--dry-run=server", "-n", self.ns, "-f", "-",
                       input=json.dumps(manifest), check=False)

    def test_applies_defaults(self):
        apply(job("defaults", Worker=2, PS=1), self.ns)
        spec = get_json("distributedtraining", "defaults", "-n", self.ns)["spec"]
        self.assertEqual(spec["replicaSpecs"]["Worker"]["restartPolicy"], "Never")
        self.assertEqual(spec["runPolicy"], {"cleanPodPolicy": "Running", "backoffLimit": 6,
                                             "suspend": False, "finalEvaluationGracePeriodSeconds": 60,
                                             "nodeLossTolerationSeconds": 30})
        self.assertEqual(spec["successPolicy"], "")
        self.assertEqual(spec["tfConfig"], {"evaluatorInCluster": True, "sparseWorkers": False})
        m = job("defaults2", Worker=1)
        del m["spec"]["replicaSpecs"]["Worker"]["replicas"]
        apply(m, self.ns)
        spec = get_json("distributedtraining", "defaults2", "-n", self.ns)["spec"]
        self.assertEqual(spec["replicaSpecs"]["Worker"]["replicas"], 1)

    def test_short_name_and_printer_columns(self):
        apply(job("columns", Worker=1), self.ns)
        out = kubectl("get", "dtr", "-n", self.ns, "-o", "wide").stdout
        header = out.splitlines()[0].split()
        self.assertEqual(header, ["NAME", "STATE", "WORKERS", "PS", "CHIEF", "EVALUATOR", "PROGRESS", "ETA", "STEP",
                                  "LOSS", "ACCURACY", "AUC", "AGE"])
        narrow = kubectl("get", "dtr", "-n", self.ns).stdout.splitlines()[0].split()
        self.assertEqual(narrow, ["NAME", "STATE", "WORKERS", "PS", "AGE"])
        self.assertIn("columns", out)

    def test_keeps_unknown_template_fields(self):
        m = job("unknown-fields", Worker=1)
        tmpl = m["spec"]["replicaSpecs"]["Worker"]["template"]
        tmpl["spec"]["nodeSelector"] = {"gpu": "h100"}
        tmpl["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
        tmpl["metadata"] = {"labels": {"team": "vision"}}
        apply(m, self.ns)
        got = get_json("distributedtraining", "unknown-fields", "-n", self.ns)
        self.assertEqual(got["spec"]["replicaSpecs"]["Worker"]["template"], tmpl)

    def test_tls_is_kept_and_cannot_be_switched_on_or_off_later(self):
        m = job("tls-immutable", Worker=1)
        m["spec"]["tls"] = {"enabled": True}
        # Suspended: no operator acts on it here; the API server alone decides.
        m["spec"].setdefault("runPolicy", {})["suspend"] = True
        apply(m, self.ns)
        self.assertEqual(get_json("dtr", "tls-immutable", "-n", self.ns)["spec"]["tls"], {"enabled": True})
        for patch in ({"spec": {"tls": {"enabled": False}}}, {"spec": {"tls": None}}):
            r = kubectl("patch", "dtr", "tls-immutable", "-n", self.ns, "--type=merge", "-p", json.dumps(patch),
                        check=False)
            self.assertNotEqual(r.returncode, 0, f"{patch} was accepted")
            self.assertIn("spec.tls.enabled is immutable", r.stderr)
        m2 = job("tls-later", Worker=1)
        apply(m2, self.ns)
        r = kubectl("patch", "dtr", "tls-later", "-n", self.ns, "--type=merge", "-p",
                    json.dumps({"spec": {"tls": {"enabled": True}}}), check=False)
        self.assertIn("spec.tls.enabled is immutable", r.stderr)

    def invalid_cases(self):
        rp = job("rp", Worker=1)
        rp["spec"]["replicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
        rp["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["restartPolicy"] = "Always"
        bad_enum = job("enum", Worker=1)
        bad_enum["spec"]["replicaSpecs"]["Worker"]["restartPolicy"] = "Sometimes"
        bad_clean = job("clean", Worker=1)
        bad_clean["spec"]["runPolicy"] = {"cleanPodPolicy": "Sometimes"}
        no_containers = job("noc", Worker=1)
        no_containers["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"] = []
        bad_success = job("succ", Worker=1)
        bad_success["spec"]["successPolicy"] = "Chief"
        above_max = job("el", Chief=1, Worker=5)
        above_max["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 4}
        no_workers = job("el", Chief=1)
        no_workers["spec"]["elasticPolicy"] = {"minReplicas": 0, "maxReplicas": 4}
        min_above_max = job("el", Chief=1, Worker=3)
        min_above_max["spec"]["elasticPolicy"] = {"minReplicas": 3, "maxReplicas": 2}
        def oom(policy):
            j = job("oom", Worker=1)
            j["spec"]["runPolicy"] = {"oomPolicy": policy}
            return j
        return [
            ("oomPolicy factor of 1", oom({"memoryFactor": 1, "maxMemory": "1Gi"}),
             "memoryFactor must be more than 1 and at most 16", "spec.runPolicy.oomPolicy.memoryFactor"),
            ("oomPolicy maxMemory not a quantity", oom({"maxMemory": "lots"}), "spec.runPolicy.oomPolicy.maxMemory",
             "is not a resource quantity"),
            ("oomPolicy without maxMemory", oom({"memoryFactor": 2}), "spec.runPolicy.oomPolicy.maxMemory",
             "spec.runPolicy.oomPolicy.maxMemory"),
            # (name, manifest, what the API server says, what render says)
            ("two chiefs", job("a", Chief=2), "at most one Chief", "at most one chief"),
            ("two evaluators", job("a", Worker=1, Evaluator=2), "at most one Evaluator",
             "at most one evaluator"),
            ("ps only", job("a", PS=2), "needs a Chief or at least one Worker",
             "needs a Chief or at least one Worker"),
            ("legacy Master key", job("a", Master=1), "Master is TFJob's legacy name: use Chief",
             "Master is TFJob's legacy name: use Chief"),
            ("unknown role key", job("a", Worker=1, Parameter=1), 'unknown role "Parameter"',
             'unknown role "Parameter"'),
            ("unknown lower-case role key", job("a", Chief=1, ps=2), 'unknown role "ps"',
             'unknown role "ps"'),
            ("negative replicas", job("a", Chief=1, Worker=-1),
             "spec.replicaSpecs.Worker.replicas", "spec.replicaSpecs.Worker.replicas"),
            ("unknown restart policy", bad_enum, 'Unsupported value: "Sometimes"',
             'unsupported value "Sometimes"'),
            ("unknown clean pod policy", bad_clean, "spec.runPolicy.cleanPodPolicy",
             "spec.runPolicy.cleanPodPolicy"),
            ("unknown success policy", bad_success, "spec.successPolicy", "spec.successPolicy"),
            ("no containers", no_containers, "spec.replicaSpecs.Worker.template.spec.containers",
             "spec.replicaSpecs.Worker.template.spec.containers"),
            ("contradicting restart policies", rp, "template.spec.restartPolicy contradicts",
             "contradicts spec.replicaSpecs.Worker.restartPolicy"),
            ("workers above elasticPolicy.maxReplicas", above_max, "must be within spec.elasticPolicy",
             "got 1 <= 5 <= 4"),
            ("elasticPolicy without workers", no_workers, "must be within spec.elasticPolicy",
             "no Worker role to scale"),
            ("elasticPolicy minimum above its maximum", min_above_max,
             "minReplicas must not exceed maxReplicas", "got 3 <= 3 <= 2"),
            # The name is the job's Service's (DNS-1035), not only a DNS subdomain as for any object.
            ("name with a dot", job("team.mnist", Worker=2), "must be a DNS-1035 label", "metadata.name"),
            ("name starting with a digit", job("1mnist", Worker=2), "must be a DNS-1035 label", "metadata.name"),
            ("name too long for the evaluator", job("a" * 52, Worker=1, Evaluator=1),
             "metadata.name is too long", "metadata.name"),
            ("name too long for eleven workers", job("a" * 54, Worker=11),
             "metadata.name is too long", "metadata.name"),
        ]

    def test_rejects_invalid_manifests_naming_the_field(self):
        for name, manifest, server_says, render_says in self.invalid_cases():
            with self.subTest(name):
                r = self.dry_run(manifest)
                self.assertNotEqual(r.returncode, 0, f"API server accepted {name}")
                self.assertIn(server_says, r.stderr)
                rr = render(manifest)
                self.assertEqual(rr.returncode, 2, f"render accepted {name}: {rr.stdout[:200]}")
                self.assertIn(render_says, rr.stderr)

    def test_longest_allowed_names_are_accepted_by_both(self):
        for manifest in (job("a" * 51, Worker=1, Evaluator=1), job("a" * 53, Worker=11),
                         job("a" * 54, Worker=10)):
            with self.subTest(name_length=len(manifest["metadata"]["name"])):
                r = self.dry_run(manifest)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(render(manifest).returncode, 0)

    def test_explain_teaches_the_fields(self):
        out = kubectl("explain", "distributedtraining.spec.runPolicy").stdout
        self.assertIn("cleanPodPolicy", out)
        self.assertIn("parameter servers never outlive the chief", " ".join(out.split()))
        out = kubectl("explain", "distributedtraining.spec.replicaSpecs").stdout
        self.assertIn("Chief, PS, Worker or Evaluator", " ".join(out.split()))
        out = kubectl("explain", "dtr.status.conditions").stdout
        self.assertIn("lastTransitionTime", out)

    def test_rendered_objects_are_accepted_by_the_api_server(self):
        manifest = copy.deepcopy(job("render", Chief=1, PS=2, Worker=3, Evaluator=1))
        manifest["metadata"]["namespace"] = self.ns
        r = render(manifest, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        items = json.loads(r.stdout)["items"]
        self.assertEqual([i["kind"] for i in items].count("Pod"), 7)
        self.assertEqual([i["kind"] for i in items].count("Service"), 1)  # the job's, headless
        self.assertEqual([i["kind"] for i in items].count("NetworkPolicy"), 1)
        for item in items:
            item["metadata"].pop("ownerReferences")  # render has no job uid to point at
        out = kubectl("apply", "--dry-run=server", "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": items}))
        self.assertEqual(out.stdout.count("created (server dry run)"), 9, out.stdout)
        self.assertIn("service/render created (server dry run)", out.stdout)
        self.assertIn("networkpolicy.networking.k8s.io/render created (server dry run)", out.stdout)


if __name__ == "__main__":
    unittest.main()
