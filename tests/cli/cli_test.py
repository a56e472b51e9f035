"""Command-line contract of the built binaries: --help, --version and exit codes."""
import json
import os
import subprocess
import unittest

BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(os.path.dirname(__file__), "../../build/bin"))
BINARIES = ["disttrain-operator", "disttrain-trainer"]


def run(binary, *args):
    return subprocess.run([os.path.join(BIN, binary), *args], capture_output=True, text=True,
                          timeout=30)


class CliTest(unittest.TestCase):
    def test_help_exits_zero_and_documents_flags(self):
        for binary in BINARIES:
            with self.subTest(binary=binary):
                r = run(binary, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(f"Usage: {binary}", r.stdout)
                self.assertIn("--version", r.stdout)

    def test_version_prints_the_release(self):
        for binary in BINARIES:
            with self.subTest(binary=binary):
                r = run(binary, "--version")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, rf"^{binary} \d+\.\d+\.\d+\n$")

    def test_unknown_flag_exits_2_and_names_it(self):
        for binary in BINARIES:
            with self.subTest(binary=binary):
                r = run(binary, "--no-such-flag")
                self.assertEqual(r.returncode, 2)
                self.assertIn("unknown flag --no-such-flag", r.stderr)

    def test_operator_refuses_out_of_range_numbers_with_exit_2(self):
        for flag in ("--workers=0", "--parallel-requests=0", "--max-requests-in-flight=-1", "--kube-api-qps=-1",
                     "--progress-interval-seconds=-1", "--progress-readings-per-second=0"):
            with self.subTest(flag=flag):
                r = run("disttrain-operator", flag)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("--max-requests-in-flight and --progress-interval-seconds >= 0", r.stderr)
                self.assertIn("--progress-readings-per-second > 0", r.stderr)

    def test_a_namespace_selector_without_tfjob_exits_2(self):
        r = run("disttrain-operator", "--tfjob-namespace-selector=team=a")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tfjob-namespace-selector needs --tfjob", r.stderr)

    def test_tfjob_queueing_takes_operator_or_kueue_and_needs_tfjob(self):
        r = run("disttrain-operator", "--tfjob", "--tfjob-queueing=volcano")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('--tfjob-queueing must be operator or kueue, not "volcano"', r.stderr)
        r = run("disttrain-operator", "--tfjob-queueing=kueue")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tfjob-queueing needs --tfjob", r.stderr)


class RenderTest(unittest.TestCase):
    EXAMPLE = os.path.join(os.path.dirname(__file__), "../../examples/quickstart.yaml")

    def test_renders_the_quickstart_as_yaml_documents(self):
        r = run("disttrain-operator", "render", "-f", self.EXAMPLE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("\nkind: Pod\n"), 7)
        self.assertEqual(r.stdout.count("\nkind: Service\n"), 1)  # one for the job
        self.assertEqual(r.stdout.count("\n  subdomain: dist\n"), 7)
        self.assertIn("name: dist-worker-2\n", r.stdout)
        self.assertEqual(r.stdout.count("\nkind: NetworkPolicy\n"), 1)
        off = run("disttrain-operator", "render", "-f", self.EXAMPLE, "--network-policy=false")
        self.assertEqual(off.returncode, 0, off.stderr)
        self.assertNotIn("kind: NetworkPolicy", off.stdout)

    def test_renders_a_v1_list_as_json_with_the_cluster_domain(self):
        r = run("disttrain-operator", "render", "-f", self.EXAMPLE, "-o", "json",
                "--cluster-domain", "cluster.local")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertEqual(out["kind"], "List")
        pod = [i for i in out["items"] if i["metadata"]["name"] == "dist-ps-1" and i["kind"] == "Pod"][0]
        env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
        tf_config = json.loads(env["TF_CONFIG"])
        self.assertEqual(tf_config["task"], {"type": "ps", "index": 1})
        self.assertEqual(tf_config["cluster"]["ps"][1], "dist-ps-1.dist.default.svc.cluster.local:2222")
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], "")
        self.assertEqual(env["NVIDIA_VISIBLE_DEVICES"], "void")

    def test_bad_invocations_exit_with_documented_codes(self):
        cases = [
            (["render"], 2, "-f JOB.yaml is required"),
            (["render", "-f", self.EXAMPLE, "-o", "xml"], 2, "-o must be yaml or json"),
            (["render", "-f", "/no/such/file.yaml"], 1, "cannot open /no/such/file.yaml"),
            (["render", "-f", self.EXAMPLE, "--gang-scheduler", "kube"], 2, "--gang-scheduler must be"),
        ]
        for args, code, message in cases:
            with self.subTest(args=args):
                r = run("disttrain-operator", *args)
                self.assertEqual(r.returncode, code, r.stderr)
                self.assertIn(message, r.stderr)


if __name__ == "__main__":
    unittest.main()


class KubectlDtrTest(unittest.TestCase):
    """The kubectl plugin's command line; what it shows of a cluster is tested on the real node."""

    def test_help_documents_every_command_and_flag(self):
        r = run("kubectl-dtr", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("kubectl dtr logs JOB [-f]", "kubectl dtr status JOB", "kubectl dtr top JOB",
                     "kubectl dtr render -f JOB.yaml", "-n, --namespace", "--kubeconfig", "--context",
                     "--timestamps", "--role", "Exit codes:"):
            self.assertIn(text, r.stdout)
        logs = run("kubectl-dtr", "logs", "--help")
        self.assertEqual(logs.returncode, 0, logs.stderr)
        self.assertIn("--follow", logs.stdout)

    def test_version_prints_the_release(self):
        r = run("kubectl-dtr", "version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^kubectl-dtr \d+\.\d+\.\d+\n$")

    def test_bad_invocations_exit_2_and_say_why(self):
        for args, message in ((["frobnicate"], 'unknown command "frobnicate"'),
                              (["status"], "want exactly one job name"),
                              (["logs", "a", "b"], "want exactly one job name"),
                              (["top", "j", "--no-such-flag"], "unknown flag --no-such-flag")):
            with self.subTest(args=args):
                r = run("kubectl-dtr", *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)
        self.assertEqual(run("kubectl-dtr").returncode, 2)

    def test_an_unreachable_cluster_is_a_clear_error(self):
        env = dict(os.environ, KUBECONFIG="/nonexistent/kubeconfig")
        r = subprocess.run([os.path.join(BIN, "kubectl-dtr"), "status", "j"], capture_output=True, text=True,
                           timeout=30, env=env)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("Error: "), r.stderr)
        self.assertIn("/nonexistent/kubeconfig", r.stderr)

    def test_render_previews_a_job_like_the_operator(self):
        quickstart = os.path.join(os.path.dirname(__file__), "../../examples/quickstart.yaml")
        plugin = run("kubectl-dtr", "render", "-f", quickstart, "-o", "json")
        operator = run("disttrain-operator", "render", "-f", quickstart, "-o", "json")
        self.assertEqual(plugin.returncode, 0, plugin.stderr)
        self.assertEqual(json.loads(plugin.stdout), json.loads(operator.stdout))
