"""How people install disttrain: plain manifests, the Helm chart, the examples and the images.

Checked against the real local API server: `kubectl apply -f deploy/` and `helm install`
create what they should, the operator's ServiceAccount can manage pods and services but cannot
read Secrets, rendered chart output is accepted, every example is valid (for the API server, for
`render` and for the trainer's flag parser), and the Dockerfiles copy binaries that `make build`
produces and run them as a non-root user.
"""
import filecmp
import glob
import json
import os
import re
import shlex
import subprocess
import unittest

import yaml

from crd_test import install_crd
from kube import BIN, ROOT, TOOLS, KUBECONFIG, ensure_tool, get_json, kubectl, wait_until

CRD = os.path.join(ROOT, "crds", "disttrain.io_distributedtrainings.yaml")
CHART = os.path.join(ROOT, "charts", "disttrain")
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))


def setUpModule():
    ensure_tool("helm")


def helm(*args, check=True):
    r = subprocess.run([os.path.join(TOOLS, "helm"), "--kubeconfig", KUBECONFIG, *args],
                       capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)}: {r.stderr}")
    return r


def can_i(verb, resource, sa, ns="default", subresource=None):
    """Asks the API server through a SubjectAccessReview (not `kubectl auth can-i`, whose answer for a
    group it cannot discover, such as Kueue's before Kueue is installed, drops the group)."""
    name, _, group = resource.partition(".")
    attrs = {"namespace": ns, "verb": verb, "group": group, "resource": name}
    if subresource:
        attrs["subresource"] = subresource
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": f"system:serviceaccount:{sa}", "resourceAttributes": attrs,
                       "groups": ["system:serviceaccounts", f"system:serviceaccounts:{sa.split(':')[0]}",
                                  "system:authenticated"]}}
    r = kubectl("create", "-f", "-", "-o", "json", input=json.dumps(review))
    return bool(json.loads(r.stdout)["status"].get("allowed"))


class CrdCopiesTest(unittest.TestCase):
    def test_chart_and_deploy_carry_byte_identical_crds(self):
        self.assertTrue(filecmp.cmp(CRD, os.path.join(CHART, "crds", os.path.basename(CRD)), shallow=False),
                        "charts/disttrain/crds differs from crds/: copy it over")
        self.assertTrue(filecmp.cmp(CRD, os.path.join(ROOT, "deploy", "01-crd.yaml"), shallow=False),
                        "deploy/01-crd.yaml differs from crds/: copy it over")


class PlainManifestsTest(unittest.TestCase):
    def test_the_grafana_dashboard_is_shipped_twice_identically_and_plots_only_metrics_we_export(self):
        dashboard = os.path.join(ROOT, "deploy", "grafana", "disttrain-dashboard.json")
        self.assertTrue(filecmp.cmp(dashboard, os.path.join(CHART, "dashboards", "disttrain-dashboard.json"),
                                    shallow=False), "charts/disttrain/dashboards differs from deploy/grafana: copy it over")
        with open(dashboard) as f:
            panels = json.load(f)["panels"]
        exprs = [t["expr"] for p in panels for t in p.get("targets", [])]
        self.assertGreaterEqual(len(exprs), 15)
        sources = ""
        for folder in ("operator", "trainer"):
            for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
                for name in files:
                    if name.endswith(".cc"):
                        with open(os.path.join(dirpath, name)) as f:
                            sources += f.read()
        metrics = {re.sub(r"_(bucket|sum|count)$", "", m)
                   for e in exprs for m in re.findall(r"\b((?:disttrain|controller_runtime|workqueue|rest_client|"
                                                       r"leader_election)_[a-z_]+)", e)}
        self.assertGreaterEqual(len(metrics), 14)
        for m in sorted(metrics):
            self.assertIn(f'"{m}"', sources, f"the dashboard plots {m}, which no binary exports")

    def test_helm_kueue_value_adds_the_flag_and_only_then_the_rbac_on_kueues_resources(self):
        on = helm("template", "dt", CHART, "--set", "kueue.enabled=true").stdout
        self.assertIn("- --kueue", on)
        self.assertNotIn("--kueue-pods-ready", on)  # PodsReady written by default
        self.assertIn("workloads/status", on)
        quiet = helm("template", "dt", CHART, "--set", "kueue.enabled=true", "--set", "kueue.podsReady=false").stdout
        self.assertIn("- --kueue-pods-ready=false", quiet)
        off = helm("template", "dt", CHART).stdout
        self.assertNotIn("--kueue", off)
        self.assertNotIn("kueue.x-k8s.io", off)

    def test_the_rbac_is_exactly_the_table_in_the_operations_guide(self):
        def rules(manifest_text):
            """(kind, group, resource, verb) of every Role and ClusterRole rule."""
            out = set()
            for doc in yaml.safe_load_all(manifest_text):
                if doc and doc["kind"] in ("Role", "ClusterRole"):
                    for r in doc["rules"]:
                        out |= {(doc["kind"], g, res, v) for g in r["apiGroups"] for res in r["resources"]
                                for v in r["verbs"]}
            return out

        with open(os.path.join(ROOT, "docs", "operations.md")) as f:
            doc = f.read()
        table = doc[doc.index("<!-- rbac:begin -->"):doc.index("<!-- rbac:end -->")].splitlines()[3:]
        documented, always, kueue = set(), set(), set()
        for row in table:
            group, resource, verbs, when = [c.strip() for c in row.strip("|").split("|")]
            kind = "Role" if "a Role" in when else "ClusterRole"
            for v in verbs.split(", "):
                entry = (kind, group.strip('"'), resource, v)
                documented.add(entry)
                if when.startswith("always"):
                    always.add(entry)
                if when == "`kueue.enabled`":
                    kueue.add(entry)
        everything = helm("template", "dt", CHART, "--set", "kueue.enabled=true", "--set", "tfjob.enabled=true",
                          "--set", "tfjob.namespaceSelector=team=a").stdout
        self.assertEqual(rules(everything), documented)
        self.assertEqual(rules(helm("template", "dt", CHART).stdout), always)
        with open(os.path.join(ROOT, "deploy", "02-rbac.yaml")) as f:  # docs/kueue.md: Kueue's rules too
            self.assertEqual(rules(f.read()), always | kueue)

    def test_helm_tfjob_values_add_the_flag_the_rbac_and_the_crd_it_keeps(self):
        on = helm("template", "dt", CHART, "--set", "tfjob.enabled=true", "--set", "tfjob.installCRD=true").stdout
        self.assertIn("- --tfjob", on)
        self.assertIn("tfjobs/status", on)
        crd = [yaml.safe_load(d) for d in on.split("\n---\n") if "kind: CustomResourceDefinition" in d]
        self.assertEqual(len(crd), 1)
        with open(os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml")) as f:
            want = yaml.safe_load(f)
        self.assertEqual(crd[0]["spec"], want["spec"])
        self.assertEqual(crd[0]["metadata"]["annotations"], {"helm.sh/resource-policy": "keep"},
                         "uninstalling the chart must not delete the TFJobs")
        self.assertTrue(filecmp.cmp(os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml"),
                                    os.path.join(CHART, "files", "kubeflow.org_tfjobs.yaml"), shallow=False),
                        "charts/disttrain/files differs from crds/: copy it over")
        self.assertNotIn("namespaces", on, "no namespace rule without a selector")
        selected = helm("template", "dt", CHART, "--set", "tfjob.enabled=true",
                        "--set", "tfjob.namespaceSelector=team in (a\\,b)").stdout
        self.assertIn("- --tfjob-namespace-selector=team in (a,b)", selected)
        self.assertIn("resources: [namespaces]", selected)
        off = helm("template", "dt", CHART).stdout
        self.assertNotIn("--tfjob", off)
        self.assertNotIn("kubeflow.org", off)

    def test_helm_renders_the_dashboard_config_map_and_the_pod_monitor_when_asked(self):
        manifest = helm("template", "dt", CHART, "--set", "grafana.dashboard=true",
                        "--set", "podMonitor.enabled=true").stdout
        docs = [d for d in manifest.split("\n---\n") if "kind: ConfigMap" in d or "kind: PodMonitor" in d]
        self.assertEqual(len(docs), 2, manifest[-2000:])
        self.assertIn('grafana_dashboard: "1"', manifest)
        self.assertIn("port: metrics", manifest)
        self.assertIn("app.kubernetes.io/managed-by: disttrain-operator", manifest)
        self.assertNotIn("kind: PodMonitor", helm("template", "dt", CHART).stdout)

    def test_helm_renders_the_alerts_and_the_operators_service_monitor_when_asked(self):
        alerts = os.path.join(ROOT, "deploy", "prometheus", "disttrain-alerts.yaml")
        self.assertTrue(filecmp.cmp(alerts, os.path.join(CHART, "alerts", "disttrain-alerts.yaml"), shallow=False),
                        "charts/disttrain/alerts differs from deploy/prometheus: copy it over")
        manifest = helm("template", "dt", CHART, "--set", "prometheusRule.enabled=true",
                        "--set", "prometheusRule.labels.release=kps", "--set", "serviceMonitor.enabled=true").stdout
        docs = {}
        for d in yaml.safe_load_all(manifest):
            if d and d["kind"] in ("PrometheusRule", "ServiceMonitor", "Service"):
                docs[d["kind"]] = d
        rule = docs["PrometheusRule"]
        self.assertEqual(rule["metadata"]["labels"]["release"], "kps")
        with open(alerts) as f:
            self.assertEqual(rule["spec"], yaml.safe_load(f), "the PrometheusRule's spec is the rules file")
        self.assertEqual({r["alert"] for g in rule["spec"]["groups"] for r in g["rules"]},
                         {"DisttrainJobWaitingTooLong", "DisttrainPodsLeftAfterJobEnded",
                          "DisttrainJobRestartingRepeatedly", "DisttrainEvaluatorSilent"})
        # The ServiceMonitor picks the operator's metrics Service by its labels and port name.
        monitor, service = docs["ServiceMonitor"], docs["Service"]
        for k, v in monitor["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(service["metadata"]["labels"].get(k), v, k)
        self.assertEqual(monitor["spec"]["endpoints"][0]["port"], service["spec"]["ports"][0]["name"])
        off = helm("template", "dt", CHART).stdout
        self.assertNotIn("kind: PrometheusRule", off)
        self.assertNotIn("kind: ServiceMonitor", off)

    def test_kubectl_apply_deploy_installs_a_least_privilege_operator(self):
        deploy = os.path.join(ROOT, "deploy")
        try:
            out = kubectl("apply", "-f", deploy).stdout
            for what in ("namespace/disttrain-system", "serviceaccount/disttrain-operator",
                         "clusterrole.rbac.authorization.k8s.io/disttrain-operator",
                         "deployment.apps/disttrain-operator", "service/disttrain-operator-metrics"):
                self.assertIn(what, out)
            dep = get_json("deployment", "disttrain-operator", "-n", "disttrain-system")
            pod = dep["spec"]["template"]["spec"]
            self.assertTrue(pod["securityContext"]["runAsNonRoot"])
            c = pod["containers"][0]
            self.assertFalse(c["securityContext"]["allowPrivilegeEscalation"])
            self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
            self.assertEqual(c["securityContext"]["capabilities"]["drop"], ["ALL"])
            self.assertIn("readinessProbe", c)
            self.assertIn("limits", c["resources"])
            role = get_json("clusterrole", "disttrain-operator")
            for rule in role["rules"]:
                self.assertNotIn("*", rule["verbs"] + rule["resources"] + rule["apiGroups"])
            sa = "disttrain-system:disttrain-operator"
            self.assertTrue(can_i("create", "pods", sa))
            self.assertTrue(can_i("delete", "services", sa))
            self.assertTrue(can_i("patch", "distributedtrainings.disttrain.io", sa, subresource="status"))
            self.assertFalse(can_i("patch", "distributedtrainings.disttrain.io", sa), "spec is the user's")
            self.assertTrue(can_i("update", "leases.coordination.k8s.io", sa, "disttrain-system"))
            self.assertFalse(can_i("update", "leases.coordination.k8s.io", sa, "default"))
            self.assertFalse(can_i("get", "secrets", sa))
            self.assertFalse(can_i("list", "secrets", sa, "disttrain-system"))
            self.assertTrue(can_i("patch", "workloads.kueue.x-k8s.io", sa, subresource="status"))
            self.assertFalse(can_i("update", "workloads.kueue.x-k8s.io", sa), "only the verbs used")
            self.assertFalse(can_i("create", "resourceflavors.kueue.x-k8s.io", sa))
        finally:
            kubectl("delete", "-f", os.path.join(deploy, "00-namespace.yaml"), "-f", os.path.join(deploy, "02-rbac.yaml"),
                    "--ignore-not-found", "--wait=false", check=False)


class ChartTest(unittest.TestCase):
    def test_helm_lint_strict_passes(self):
        r = helm("lint", "--strict", CHART)
        self.assertIn("0 chart(s) failed", r.stdout)

    def test_every_value_is_documented(self):
        """Each leaf value has a '# --' comment above it or above one of its parents."""
        with open(os.path.join(CHART, "values.yaml")) as f:
            lines = f.read().splitlines()
        documented = []  # (indent, documented?) of the enclosing keys
        for i, line in enumerate(lines):
            m = re.match(r"^(\s*)([a-zA-Z]+):(.*)$", line)
            if not m:
                continue
            indent = len(m.group(1))
            while documented and documented[-1][0] >= indent:
                documented.pop()
            doc = i > 0 and lines[i - 1].strip().startswith("# --")
            inherited = any(d for _, d in documented)
            is_group = m.group(3).strip() == "" and i + 1 < len(lines) and len(lines[i + 1]) - len(lines[i + 1].lstrip()) > indent
            if not is_group:
                self.assertTrue(doc or inherited, f"values.yaml: {m.group(2)} has no '# --' doc")
            documented.append((indent, doc))

    def test_template_output_is_accepted_by_the_api_server(self):
        kubectl("create", "namespace", "disttrain-tmpl", check=False)
        try:
            manifest = helm("template", "dt", CHART, "--namespace", "disttrain-tmpl",
                            "--set", "watchNamespace=team-a", "--set", "clusterDomain=cluster.local").stdout
            self.assertIn("--namespace=team-a", manifest)
            out = kubectl("apply", "--dry-run=server", "-f", "-", input=manifest).stdout
            self.assertIn("deployment.apps/dt-disttrain created (server dry run)", out)
        finally:
            kubectl("delete", "namespace", "disttrain-tmpl", "--wait=false", check=False)

    def test_helm_install_creates_the_operator_and_least_privilege_rbac(self):
        ns = "disttrain-helm"
        try:
            r = helm("install", "dt", CHART, "--namespace", ns, "--create-namespace", "--skip-crds")
            self.assertIn("kubectl get distributedtrainings -w", r.stdout, "NOTES.txt tells how to start")
            dep = get_json("deployment", "dt-disttrain", "-n", ns)
            self.assertEqual(dep["spec"]["replicas"], 2)
            args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
            self.assertIn("--leader-elect", args)
            self.assertIn("--workers=6", args)
            self.assertIn("--max-requests-in-flight=16", args)
            get_json("service", "dt-disttrain-metrics", "-n", ns)
            sa = f"{ns}:dt-disttrain"
            self.assertTrue(can_i("create", "pods", sa))
            self.assertTrue(can_i("delete", "pods", sa))
            self.assertTrue(can_i("create", "services", sa))
            self.assertFalse(can_i("get", "secrets", sa))
            self.assertFalse(can_i("get", "secrets", sa, ns))
            # Exactly the table's rows for the default values, no more: in any namespace the
            # ClusterRole's, in the operator's also its Role's (the leader lease).
            always = {r for r in table_rules() if r[4].startswith("always")}
            cluster = {(g, res, v) for kind, g, res, v, _ in always if kind == "ClusterRole"}
            role = {(g, res, v) for kind, g, res, v, _ in always if kind == "Role"}
            self.assertEqual(rules_review(sa, "default") - EVERYONE, cluster)
            self.assertEqual(rules_review(sa, ns) - EVERYONE, cluster | role)
        finally:
            helm("uninstall", "dt", "--namespace", ns, check=False)
            kubectl("delete", "namespace", ns, "--wait=false", check=False)


def table_rules():
    """(kind, group, resource, verb, when) of every row of the RBAC table in docs/operations.md."""
    with open(os.path.join(ROOT, "docs", "operations.md")) as f:
        doc = f.read()
    out = set()
    for row in doc[doc.index("<!-- rbac:begin -->"):doc.index("<!-- rbac:end -->")].splitlines()[3:]:
        group, resource, verbs, when = [c.strip() for c in row.strip("|").split("|")]
        kind = "Role" if "a Role" in when else "ClusterRole"
        out |= {(kind, group.strip('"'), resource, v, when) for v in verbs.split(", ")}
    return out


def rules_review(sa, ns):
    """(group, resource, verb) the service account may use in `ns`: a SelfSubjectRulesReview made as
    the account (what `kubectl auth can-i --list --as=...` prints), one entry per combination."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": ns}}
    r = kubectl("create", "--validate=false", "-f", "-", "-o", "json", f"--as=system:serviceaccount:{sa}",
                "--as-group=system:serviceaccounts", f"--as-group=system:serviceaccounts:{sa.split(':')[0]}",
                "--as-group=system:authenticated", input=json.dumps(review))
    out = set()
    for rule in json.loads(r.stdout)["status"].get("resourceRules", []):
        out |= {(g, res, v) for g in rule.get("apiGroups", [""]) for res in rule["resources"] for v in rule["verbs"]}
    return out


# What every authenticated user may do (the API server's own discovery and self-review rules).
EVERYONE = {("authorization.k8s.io", "selfsubjectaccessreviews", "create"),
            ("authorization.k8s.io", "selfsubjectrulesreviews", "create"),
            ("authentication.k8s.io", "selfsubjectreviews", "create")}


def containers(doc):
    for spec in doc.get("spec", {}).get("replicaSpecs", {}).values():
        yield from spec["template"]["spec"]["containers"]


class ExamplesTest(unittest.TestCase):
    def test_examples_are_valid_for_the_api_server_render_and_the_trainer(self):
        install_crd()
        self.assertGreaterEqual(len(EXAMPLES), 4)
        for path in EXAMPLES:
            with self.subTest(example=os.path.basename(path)):
                r = kubectl("apply", "--dry-run=server", "-f", path, "-n", "default", check=False)
                self.assertEqual(r.returncode, 0, r.stderr)
                rendered = subprocess.run([os.path.join(BIN, "disttrain-operator"), "render", "-f", path, "-o", "json"],
                                          capture_output=True, text=True)
                self.assertEqual(rendered.returncode, 0, rendered.stderr)
                for item in json.loads(rendered.stdout)["items"]:
                    if item["kind"] != "Pod":
                        continue
                    args = item["spec"]["containers"][0].get("args", [])
                    if not args:
                        continue
                    # Flags that parse and validate reach the TF_CONFIG check (exit 2 with that message).
                    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
                    t = subprocess.run([os.path.join(BIN, "disttrain-trainer"), *args], env=env,
                                       capture_output=True, text=True, timeout=30)
                    self.assertIn("TF_CONFIG is not set", t.stderr, f"{item['metadata']['name']}: {t.stderr}")


class DockerfilesTest(unittest.TestCase):
    def test_dockerfiles_are_multi_stage_non_root_and_copy_what_make_build_produces(self):
        for name in ("Dockerfile.operator", "Dockerfile.trainer", "Dockerfile.trainer-cuda"):
            with self.subTest(dockerfile=name):
                with open(os.path.join(ROOT, "deploy", name)) as f:
                    text = f.read()
                self.assertGreaterEqual(len(re.findall(r"^FROM ", text, re.M)), 2, "multi-stage")
                final = text.rsplit("\nFROM ", 1)[1]
                self.assertNotIn("-dev", final, "only runtime libraries in the final stage")
                user = re.search(r"^USER (\d+)", final, re.M)
                self.assertTrue(user and user.group(1) != "0", "non-root user")
                for src in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
                    self.assertTrue(os.path.exists(os.path.join(ROOT, src)), f"COPY {src} does not exist")
                targets = re.search(r"--target ([^\\&\n]+)", text).group(1).split()
                for binary in targets:
                    self.assertTrue(os.access(os.path.join(BIN, binary), os.X_OK), f"make build does not produce {binary}")

    def test_debian_runtime_packages_exist(self):
        for name in ("Dockerfile.operator", "Dockerfile.trainer"):
            with open(os.path.join(ROOT, "deploy", name)) as f:
                text = f.read()
            # The runtime stage installs the libraries; the final stage (FROM scratch) copies its /rootfs.
            self.assertIn("\nFROM scratch\nCOPY --from=runtime /rootfs /\n", text)
            runtime = text.split(" AS runtime\n", 1)[1].split("\nFROM ", 1)[0]
            packages = re.search(r"install -y --no-install-recommends\s*\\?\s*(.*?)\s*\\?\s*&&", runtime, re.S).group(1)
            for pkg in shlex.split(packages.replace("\\", " ")):
                with self.subTest(package=pkg):
                    r = subprocess.run(["apt-cache", "show", pkg], capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, f"{name}: Debian has no package {pkg}")


if __name__ == "__main__":
    unittest.main()
