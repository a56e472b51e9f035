"""The operator runtime against the real API server: informer event order and latency, recovery
after the API server restarts, leader election with takeover after SIGKILL, and a clear
PermissionDenied for a client that RBAC limits."""
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest

from crd_test import install_crd
from kube import BIN, KUBECONFIG, ROOT, Namespace, apply, get_json, kubectl, wait_until
from lifecycle_test import job, role
from operator_process import OperatorProcess
from probe import Probe


def pod(name, labels=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"probe": "yes", **(labels or {})}},
            "spec": {"containers": [{"name": "main", "image": "registry.example/x:1"}]}}


class InformerTest(unittest.TestCase):
    def test_sees_creates_updates_and_deletes_in_order(self):
        with Namespace("inf") as ns:
            probe = Probe(ns)
            try:
                # The create happens between t0 and t1 (kubectl's own start-up is in there), so
                # the informer latency lies between added - t1 and added - t0.
                upper, lower = [], []
                for i in range(5):
                    t0 = time.time()
                    apply(pod(f"p{i}"), ns)
                    t1 = time.time()
                    added = wait_until(f"p{i} added", lambda: probe.find("add", f"p{i}"), timeout=10)
                    upper.append(added[0]["unix_us"] / 1e6 - t0)
                    lower.append(added[0]["unix_us"] / 1e6 - t1)
                kubectl("label", "pod", "p0", "-n", ns, "extra=1")
                kubectl("delete", "pod", "p0", "-n", ns, "--wait=true")
                wait_until("p0 deleted", lambda: probe.find("delete", "p0"), timeout=30)
                events = probe.events_for("p0")
                self.assertEqual(events[0], "add")
                self.assertEqual(events[-1], "delete")
                self.assertIn("update", events[1:-1])
                rvs = [int(l["resourceVersion"]) for l in probe.lines if l.get("name") == "p0"]
                self.assertEqual(rvs, sorted(rvs), "events arrive in resourceVersion order")
                upper.sort()
                lower.sort()
                print(f"informer add latency, median of 5: between {lower[2] * 1000:.1f} and "
                      f"{upper[2] * 1000:.1f} ms after the create")
                # Pods outside the selector are never seen.
                unlabeled = pod("other")
                unlabeled["metadata"]["labels"] = {"probe": "no"}
                apply(unlabeled, ns)
                # Watch events come in resourceVersion order: once a later labelled pod is seen,
                # the unlabelled one would have been seen before it.
                apply(pod("after"), ns)
                wait_until("the probe to see a later pod", lambda: probe.find("add", "after"), timeout=30)
                self.assertFalse(probe.events_for("other"))
            finally:
                probe.stop()

    def test_recovers_after_the_api_server_restarts(self):
        with Namespace("inf") as ns:
            probe = Probe(ns)
            try:
                apply(pod("before"), ns)
                wait_until("before added", lambda: probe.find("add", "before"), timeout=10)
                subprocess.run([os.path.join(ROOT, "tests/cluster/restart-apiserver.sh"), "--compact"],
                               check=True, timeout=120)
                apply(pod("after"), ns)
                wait_until("after added", lambda: probe.find("add", "after"), timeout=60)
                stats = probe.stats()
                self.assertEqual(stats["objects"], 2)
                # etcd was compacted past the informer's resourceVersion while the API server was
                # down: its watch is answered with 410 Gone and it lists again.
                self.assertGreaterEqual(stats["lists"], 2, "the informer relisted after 410 Gone")
            finally:
                probe.stop()

    def test_operator_keeps_working_after_the_api_server_restarts(self):
        install_crd()
        with Namespace("inf") as ns:
            op = OperatorProcess("restart-api").start()
            try:
                subprocess.run([os.path.join(ROOT, "tests/cluster/restart-apiserver.sh")], check=True, timeout=120)
                apply(job("afterrestart", Chief=role(1, 0, 1), PS=role(1)), ns)
                wait_until("the job to succeed", lambda: get_json("dtr", "afterrestart", "-n", ns).get(
                    "status", {}).get("state") == "Succeeded", timeout=60)
            finally:
                self.assertEqual(op.stop(), 0)


def leader_status(op):
    m = re.search(r"^leader_election_master_status\{[^}]*\} (\d+)", op.metrics(), re.M)
    return int(m.group(1)) if m else None


def reconciles(op):
    """Reconciles this operator has run, all results together (the series exist from the start)."""
    counts = re.findall(r"^controller_runtime_reconcile_total\{[^}]*\} (\d+)", op.metrics(), re.M)
    if not counts:
        raise AssertionError("controller_runtime_reconcile_total is missing from /metrics")
    return sum(int(c) for c in counts)


class LeaderElectionTest(unittest.TestCase):
    def test_one_leader_the_standby_never_reconciles_and_takes_over_after_sigkill(self):
        install_crd()
        with Namespace("le") as ns:
            args = ("--leader-elect", "--leader-election-namespace", ns)
            a = OperatorProcess("leader-a", *args).start()
            b = OperatorProcess("leader-b", *args).start()
            try:
                wait_until("a leader", lambda: {leader_status(a), leader_status(b)} == {0, 1}, timeout=30)
                leader, standby = (a, b) if leader_status(a) == 1 else (b, a)
                self.assertEqual(standby.http_get(standby.health_port, "/readyz")[0], 200, "standby keeps warm caches")
                lease = get_json("lease", "disttrain-operator-leader", "-n", ns)["spec"]

                # A job applied while both run: the leader runs it, the standby (whose caches see
                # the same events) reconciles nothing.
                apply(job("first", Chief=role(1, 0, 1), PS=role(1)), ns)
                wait_until("the leader runs the job", lambda: get_json("dtr", "first", "-n", ns).get(
                    "status", {}).get("state") == "Succeeded", timeout=60)
                self.assertGreater(reconciles(leader), 0)
                self.assertEqual(reconciles(standby), 0, "the standby reconciled while another process led")
                after = get_json("lease", "disttrain-operator-leader", "-n", ns)["spec"]
                self.assertEqual(after["holderIdentity"], lease["holderIdentity"], "the lease changed hands")
                self.assertEqual(after.get("leaseTransitions"), lease.get("leaseTransitions"))
                self.assertEqual({leader_status(a), leader_status(b)}, {0, 1}, "still exactly one leader")

                leader.kill()
                killed = time.monotonic()
                wait_until("the standby to take over", lambda: leader_status(standby) == 1, timeout=40)
                takeover = time.monotonic() - killed
                print(f"leader takeover after SIGKILL: {takeover:.1f} s")
                self.assertLess(takeover, 25)
                apply(job("led", Chief=role(1, 0, 1), PS=role(1)), ns)
                wait_until("the new leader runs the job", lambda: get_json("dtr", "led", "-n", ns).get(
                    "status", {}).get("state") == "Succeeded", timeout=60)
                self.assertGreater(reconciles(standby), 0)
                # A clean stop releases the lease at once.
                lease = get_json("lease", "disttrain-operator-leader", "-n", ns)
                self.assertTrue(lease["spec"]["holderIdentity"])
                self.assertEqual(standby.stop(), 0)
                lease = get_json("lease", "disttrain-operator-leader", "-n", ns)
                self.assertEqual(lease["spec"].get("holderIdentity", ""), "")
            finally:
                a.stop()
                b.stop()


class RbacTest(unittest.TestCase):
    def test_a_client_limited_by_rbac_gets_a_clear_permission_denied(self):
        install_crd()
        with Namespace("rbac") as ns:
            kubectl("create", "serviceaccount", "limited", "-n", ns)
            token = kubectl("create", "token", "limited", "-n", ns).stdout.strip()
            cfg = json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)
            cluster = cfg["clusters"][0]["cluster"]
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "limited",
                           "clusters": [{"name": "c", "cluster": cluster}],
                           "contexts": [{"name": "limited", "context": {"cluster": "c", "user": "limited"}}],
                           "users": [{"name": "limited", "user": {"token": token}}]}, f)
            op = OperatorProcess("rbac", "--kubeconfig", f.name)
            try:
                op.start(wait_ready=False)
                log = wait_until("a permission error", lambda: "PERMISSION_DENIED" in op.read_log() and op.read_log(),
                                 timeout=30)
                self.assertIn("forbidden", log)
                self.assertIn("system:serviceaccount:" + ns + ":limited", log)
                self.assertNotIn(token, log, "tokens never appear in logs")
                self.assertEqual(op.http_get(op.health_port, "/readyz")[0], 503)
            finally:
                op.stop()
                os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
