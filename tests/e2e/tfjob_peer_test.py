"""TFJobs side by side with Kubeflow's training-operator v1.9 (the peer), and the migration to
disttrain and back, as docs/tfjob.md tells it, against the real peer on the local cluster.

1. The same TFJob through the peer and through disttrain-operator --tfjob: pod and Service names,
   the training.kubeflow.org labels, TF_CONFIG (parsed), Service ports, and the conditions each
   job goes through are compared; the differences docs/tfjob.md lists are the only ones allowed.
2. Migration: TFJobs running under the peer; the peer is stopped and its webhook configuration
   deleted, our TFJob CRD is applied over its CRD, disttrain starts: it adopts the running pods
   (no pod gets a second UID), finishes the jobs and tears their parameter servers down.
3. Rollback: a job running under disttrain; disttrain stops, the peer's CRD and the peer come back:
   the peer adopts it unchanged and finishes it.
4. Namespace by namespace: the peer watches one namespace (--namespace), disttrain the labelled
   ones (--tfjob-namespace-selector); each writes only its own jobs' status, and a namespace moved
   over (its peer stopped, the label set) has its running job adopted with no pod recreated.
Pods run on kwok's simulated nodes, their exits driven by lifecycle_test.role's annotations.
"""
import json
import os
import threading
import time
import unittest

from crd_test import install_crd
from kube import ROOT, Namespace, apply, get_json, kubectl, wait_until
from lifecycle_test import role
from operator_process import OperatorProcess
from peer_process import Peer, build_peer

OUR_CRD = os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml")
LABEL_PREFIX = "training.kubeflow.org/"


def tfjob(name, chief_seconds, evaluator=False, chief="Chief"):
    replicas = {chief: role(1, 0, chief_seconds), "PS": role(1), "Worker": role(2)}
    if evaluator:
        replicas["Evaluator"] = role(1)
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": replicas}}


def conditions(ns, name):
    return get_json("tfjob", name, "-n", ns).get("status", {}).get("conditions") or []


def is_true(ns, name, ctype):
    return any(c["type"] == ctype and c["status"] == "True" for c in conditions(ns, name))


class PodUids:
    """Every (pod name -> UIDs) seen in a namespace, polled until stopped."""

    def __init__(self, ns):
        self.ns, self.seen, self.stop_flag = ns, {}, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_flag.is_set():
            for p in get_json("pods", "-n", self.ns)["items"]:
                self.seen.setdefault(p["metadata"]["name"], set()).add(p["metadata"]["uid"])
            time.sleep(0.3)

    def stop(self):
        self.stop_flag.set()
        self.thread.join()
        return self.seen


def status_writers(ns, name):
    """The field managers that have written a TFJob's status."""
    job = get_json("tfjob", name, "-n", ns, "--show-managed-fields")
    return {m["manager"] for m in job["metadata"].get("managedFields", []) if m.get("subresource") == "status"}


def snapshot(ns, name):
    """What a TFJob's users see of its running pods and Services, with the namespace taken out."""
    out = {}
    for p in get_json("pods", "-n", ns, "-l", f"{LABEL_PREFIX}job-name={name}")["items"]:
        c = [c for c in p["spec"]["containers"] if c["name"] == "tensorflow"][0]
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        out[p["metadata"]["name"]] = {
            "labels": {k: v for k, v in p["metadata"]["labels"].items() if k.startswith(LABEL_PREFIX)},
            "owner": {k: p["metadata"]["ownerReferences"][0][k] for k in ("apiVersion", "kind", "name", "controller")},
            "restartPolicy": p["spec"]["restartPolicy"],
            "TF_CONFIG": json.loads(env["TF_CONFIG"].replace(f".{ns}.svc", ".NS.svc")),
        }
    for s in get_json("services", "-n", ns, "-l", f"{LABEL_PREFIX}job-name={name}")["items"]:
        out["svc/" + s["metadata"]["name"]] = {
            "clusterIP": s["spec"]["clusterIP"],
            "ports": [(p["name"], p["port"]) for p in s["spec"]["ports"]],
            "selector": s["spec"]["selector"],
        }
    return out


def condition_path(ns, name, until, timeout=90):
    """The (type, status, reason) lists a TFJob's conditions go through until `until` is True."""
    path, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = [(c["type"], c["status"], c.get("reason", "")) for c in conditions(ns, name)]
        if now and (not path or path[-1] != now):
            path.append(now)
        if (until, "True") in [c[:2] for c in now]:  # the same read as the path's
            return path
        time.sleep(0.2)
    raise AssertionError(f"{ns}/{name} never reached {until}: {path}")


class TfJobPeerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = build_peer()
        install_crd()  # our operator serves DistributedTrainings too: its readiness waits for their cache

    def start_peer(self, *args):
        Peer.install(self.folder)
        return Peer(self.folder, list(args)).start()

    def switch_to_disttrain(self, peer):
        """docs/tfjob.md, "Migrating": stop the peer, delete its webhook, apply our CRD, start ours."""
        peer.stop()
        kubectl("delete", "validatingwebhookconfiguration", "validator.training-operator.kubeflow.org",
                "--ignore-not-found")
        kubectl("apply", "--server-side", "--force-conflicts", "-f", OUR_CRD)
        return OperatorProcess("tfjob-migration", "--tfjob", "--workers", "4").start()

    def test_side_by_side_migration_and_rollback(self):
        with Namespace("peer") as peer_ns, Namespace("ours") as our_ns, Namespace("migrate") as mig_ns:
            peer = self.start_peer()
            ours = None
            try:
                # 1a. The peer runs "twin"; three jobs start under it for the migration.
                apply(tfjob("twin", 15, evaluator=True), peer_ns)
                apply(tfjob("legacy", 15, chief="Master"), peer_ns)
                for i in range(3):
                    apply(tfjob(f"mig-{i}", 35), mig_ns)
                uids = PodUids(mig_ns)
                peer_path = condition_path(peer_ns, "twin", "Running")
                wait_until("all pods", lambda: len(get_json("pods", "-n", peer_ns)["items"]) == 9, timeout=30)
                peer_view = snapshot(peer_ns, "twin")
                peer_legacy = snapshot(peer_ns, "legacy")
                peer_path += condition_path(peer_ns, "twin", "Succeeded")[1:]
                for i in range(3):
                    wait_until(f"mig-{i} Running under the peer", lambda i=i: is_true(mig_ns, f"mig-{i}", "Running"),
                               timeout=60)

                # 2. Migration.
                ours = self.switch_to_disttrain(peer)
                apply(tfjob("twin", 15, evaluator=True), our_ns)
                apply(tfjob("legacy", 15, chief="Master"), our_ns)
                our_path = condition_path(our_ns, "twin", "Running")
                wait_until("all pods", lambda: len(get_json("pods", "-n", our_ns)["items"]) == 9, timeout=30)
                our_view = snapshot(our_ns, "twin")
                our_legacy = snapshot(our_ns, "legacy")
                our_path += condition_path(our_ns, "twin", "Succeeded")[1:]

                # 1b. Side by side: the same names, labels, TF_CONFIG and Services (a Master's too).
                self.assertEqual(sorted(our_view), sorted(peer_view))
                self.assertEqual(sorted(our_legacy), sorted(peer_legacy))
                self.assertIn("legacy-master-0", our_legacy)
                our_view.update(our_legacy)
                peer_view.update(peer_legacy)
                for key in peer_view:
                    mine, theirs = our_view[key], peer_view[key]
                    if key.startswith("svc/"):
                        # docs/tfjob.md: our Services select their pod by fewer labels.
                        self.assertEqual(mine["clusterIP"], theirs["clusterIP"], key)
                        self.assertEqual(mine["ports"], theirs["ports"], key)
                        self.assertLessEqual(mine["selector"].items(), theirs["selector"].items(), key)
                    else:
                        self.assertEqual(mine, theirs, key)
                last = lambda path: [p[-1][:2] for p in path]
                # The first condition ever set is Created (the path's first read may already hold
                # Running as well when the pods start before the first poll).
                self.assertEqual(our_path[0][0][:2], ("Created", "True"))
                self.assertEqual(peer_path[0][0][:2], ("Created", "True"))
                self.assertEqual(last(our_path)[-1], last(peer_path)[-1])
                self.assertEqual(our_path[-1][-1], peer_path[-1][-1], "Succeeded with TFJob's reason")
                self.assertIn(("Running", "True", "TFJobRunning"), [c for p in our_path for c in p])

                for i in range(3):
                    wait_until(f"mig-{i} Succeeded under disttrain",
                               lambda i=i: is_true(mig_ns, f"mig-{i}", "Succeeded"), timeout=90)
                    wait_until(f"mig-{i}'s ps torn down", lambda i=i: not [
                        p for p in get_json("pods", "-n", mig_ns, "-l",
                                            f"{LABEL_PREFIX}job-name=mig-{i},{LABEL_PREFIX}replica-type=ps")["items"]
                        if not p["metadata"].get("deletionTimestamp")], timeout=30)
                seen = uids.stop()
                self.assertEqual(len(seen), 3 * 4)
                twice = {name: u for name, u in seen.items() if len(u) > 1}
                self.assertEqual(twice, {}, "a pod was recreated during the migration")

                # 3. Rollback: a job running under disttrain goes back to the peer unchanged.
                apply(tfjob("back", 30), mig_ns)
                wait_until("back Running under disttrain", lambda: is_true(mig_ns, "back", "Running"), timeout=60)
                uids = PodUids(mig_ns)
                self.assertEqual(ours.stop(), 0)
                ours = None
                peer = self.start_peer()  # re-applies its CRD and webhook configuration
                wait_until("back Succeeded under the peer", lambda: is_true(mig_ns, "back", "Succeeded"), timeout=90)
                seen = uids.stop()
                back = {n: u for n, u in seen.items() if n.startswith("back-")}
                self.assertEqual(len(back), 4)
                self.assertEqual({n: u for n, u in back.items() if len(u) > 1}, {},
                                 "a pod was recreated in the rollback")
            finally:
                if ours:
                    ours.stop()
                peer.stop()
                # Leave our CRD for the suites that follow.
                kubectl("delete", "validatingwebhookconfiguration", "validator.training-operator.kubeflow.org",
                        "--ignore-not-found")
                kubectl("apply", "--server-side", "--force-conflicts", "-f", OUR_CRD)

    def test_namespace_by_namespace_migration_with_a_namespace_selector(self):
        selector = "disttrain.io/tfjob-e2e=enabled"
        with Namespace("kept") as kept_ns, Namespace("moved") as moved_ns:
            kubectl("label", "namespace", moved_ns, selector)
            peer = self.start_peer(f"--namespace={kept_ns}")
            ours = None
            try:
                kubectl("delete", "validatingwebhookconfiguration", "validator.training-operator.kubeflow.org")
                kubectl("apply", "--server-side", "--force-conflicts", "-f", OUR_CRD)
                ours = OperatorProcess("tfjob-selector", "--tfjob", f"--tfjob-namespace-selector={selector}").start()
                apply(tfjob("a", 4), kept_ns)
                apply(tfjob("b", 4), moved_ns)
                for ns, name in ((kept_ns, "a"), (moved_ns, "b")):
                    wait_until(f"{ns}/{name} Succeeded", lambda ns=ns, name=name: is_true(ns, name, "Succeeded"),
                               timeout=90)
                peer_writers, our_writers = status_writers(kept_ns, "a"), status_writers(moved_ns, "b")
                self.assertEqual(len(peer_writers), 1, peer_writers)
                self.assertEqual(len(our_writers), 1, our_writers)
                self.assertNotEqual(peer_writers, our_writers, "one controller wrote both namespaces' jobs")

                # The kept namespace moves over: a job running there keeps its pods.
                apply(tfjob("c", 30), kept_ns)
                wait_until("c Running under the peer", lambda: is_true(kept_ns, "c", "Running"), timeout=60)
                uids = PodUids(kept_ns)
                peer.stop()
                kubectl("label", "namespace", kept_ns, selector)
                wait_until("c Succeeded under disttrain", lambda: is_true(kept_ns, "c", "Succeeded"), timeout=90)
                self.assertEqual(status_writers(kept_ns, "c"), peer_writers | our_writers)
                wait_until("c's ps torn down", lambda: not [
                    p for p in get_json("pods", "-n", kept_ns, "-l",
                                        f"{LABEL_PREFIX}job-name=c,{LABEL_PREFIX}replica-type=ps")["items"]
                    if not p["metadata"].get("deletionTimestamp")], timeout=30)
                seen = {n: u for n, u in uids.stop().items() if n.startswith("c-")}
                self.assertEqual(len(seen), 4)
                self.assertEqual({n: u for n, u in seen.items() if len(u) > 1}, {}, "a pod was recreated")
            finally:
                if ours:
                    self.assertEqual(ours.stop(), 0)
                peer.stop()
                kubectl("delete", "validatingwebhookconfiguration", "validator.training-operator.kubeflow.org",
                        "--ignore-not-found")
                kubectl("apply", "--server-side", "--force-conflicts", "-f", OUR_CRD)


if __name__ == "__main__":
    unittest.main()
