"""A node lost under a running job (issue #37): its heartbeats stop, the node lifecycle controller
marks it NotReady and taints it, the taint manager evicts the job's pods there once
runPolicy.nodeLossTolerationSeconds have passed, and the operator removes the evicted pods (no
kubelet will confirm them) and creates the replicas again on another node. Without the operator's
tolerations the pods would keep Kubernetes' 300 s, and without the removal they would stay
Terminating for good, holding their names.

The lost node is played by the test (kwok keeps heartbeating a node it once managed): a Node it
registers, heartbeats every 5 s and whose pods it reports Running, as a kubelet would; losing it
is stopping the heartbeats. The control plane's reaction is the real one. An informer probe
records every pod event with its UID, so the test checks that no replica ever had two live pods."""
import collections
import datetime
import json
import threading
import time
import unittest

from crd_test import install_crd
from kube import Namespace, apply, get_json, kubectl, wait_until
from lifecycle_test import job, role
from operator_process import OperatorProcess
from probe import Probe

TOLERATION = 10  # runPolicy.nodeLossTolerationSeconds of the test's job
NODE = "lost-node-0"


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_ready(name):
    for c in get_json("node", name).get("status", {}).get("conditions", []):
        if c["type"] == "Ready":
            return c["status"] == "True"
    return False


def pods_of(ns, job_name):
    return get_json("pods", "-n", ns, "-l", f"disttrain.io/job-name={job_name}")["items"]


class HandNode:
    """A node whose kubelet is this test: heartbeats until lose(), and runs what is bound to it."""

    def __init__(self):
        apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": {
            "kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux", "type": "hand"}}})
        self.beating = threading.Event()
        self.beating.set()
        self.heartbeat()
        threading.Thread(target=self._beat, daemon=True).start()

    def heartbeat(self):
        capacity = {"cpu": "64", "memory": "512Gi", "pods": "110"}
        kubectl("patch", "node", NODE, "--subresource=status", "--type=strategic", "-p", json.dumps(
            {"status": {"capacity": capacity, "allocatable": capacity, "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "the test's heartbeat",
                 "lastHeartbeatTime": now(), "lastTransitionTime": now()}]}}), check=False)

    def _beat(self):
        while self.beating.is_set():
            self.heartbeat()
            time.sleep(5)

    def run_pods(self, ns):
        """Reports every pod bound here Running and ready; returns their names."""
        names = []
        for p in get_json("pods", "-n", ns, "--field-selector", f"spec.nodeName={NODE}")["items"]:
            name = p["metadata"]["name"]
            kubectl("patch", "pod", name, "-n", ns, "--subresource=status", "--type=merge", "-p", json.dumps(
                {"status": {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}],
                    "containerStatuses": [{"name": "tensorflow", "ready": True, "restartCount": 0,
                                           "image": "registry.example/trainer:1", "imageID": "",
                                           "state": {"running": {"startedAt": now()}}}]}}))
            names.append(name)
        return names

    def lose(self):
        self.beating.clear()

    def delete(self):
        self.beating.clear()
        kubectl("delete", "node", NODE, "--ignore-not-found", "--wait=false")


def prefer_the_hand_node(role_spec):
    role_spec["template"]["spec"]["affinity"] = {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": {
            "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}}]}}
    return role_spec


class LostNodeTest(unittest.TestCase):
    def test_pods_of_a_lost_node_are_replaced_within_their_toleration(self):
        install_crd()
        with Namespace("lost-node") as ns:
            probe = Probe(ns, "disttrain.io/job-name=lost")
            operator = OperatorProcess("lost-node").start()
            node = HandNode()
            try:
                wait_until(f"{NODE} Ready and untainted", lambda: node_ready(NODE) and not get_json(
                    "node", NODE)["spec"].get("taints"), timeout=30)
                # The chief ends 30 s after it starts on a kwok node; on the hand node it runs until lost.
                apply(job("lost", {"nodeLossTolerationSeconds": TOLERATION},
                          Chief=prefer_the_hand_node(role(1, 0, 30)), PS=prefer_the_hand_node(role(1)),
                          Worker=prefer_the_hand_node(role(2))), ns)
                wait_until("every pod bound", lambda: len(
                    [p for p in pods_of(ns, "lost") if p["spec"].get("nodeName")]) == 4, timeout=60)
                wait_until("the hand node's pods running", lambda: node.run_pods(ns), timeout=10)
                wait_until("the job running", lambda: get_json("dtr", "lost", "-n", ns).get(
                    "status", {}).get("state") == "Running", timeout=60)
                pods = pods_of(ns, "lost")
                for p in pods:  # the operator's tolerations replace the admission plugin's 300 s
                    lost = [t for t in p["spec"]["tolerations"] if t["key"].startswith("node.kubernetes.io/")]
                    self.assertEqual(sorted((t["key"], t["tolerationSeconds"]) for t in lost),
                                     [("node.kubernetes.io/not-ready", TOLERATION),
                                      ("node.kubernetes.io/unreachable", TOLERATION)], p["metadata"]["name"])
                on_node = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods if p["spec"]["nodeName"] == NODE}
                self.assertIn("lost-ps-0", on_node, f"the scheduler placed {on_node} on {NODE}")

                node.lose()
                wait_until(f"{NODE} NotReady", lambda: not node_ready(NODE), timeout=90)
                lost_at = time.monotonic()

                def replaced():
                    now = {p["metadata"]["name"]: p for p in pods_of(ns, "lost")}
                    return all(name in now and now[name]["metadata"]["uid"] != uid
                               and now[name].get("spec", {}).get("nodeName") not in (None, NODE)
                               and now[name].get("status", {}).get("phase") == "Running"
                               for name, uid in on_node.items())
                wait_until(f"{sorted(on_node)} replaced on another node", replaced, timeout=TOLERATION + 40)
                took = time.monotonic() - lost_at
                print(f"{sorted(on_node)} lost with {NODE}: Running elsewhere {took:.1f} s after NotReady "
                      f"(toleration {TOLERATION} s)", flush=True)
                self.assertLessEqual(took, TOLERATION + 15)
                events = get_json("events", "-n", ns, "--field-selector", "reason=PodOfLostNodeRemoved")["items"]
                self.assertEqual({e["involvedObject"]["name"] for e in events}, {"lost"})
                self.assertGreaterEqual(sum(e.get("count", 1) for e in events), len(on_node))

                wait_until("the job to succeed", lambda: get_json("dtr", "lost", "-n", ns).get(
                    "status", {}).get("state") == "Succeeded", timeout=120)
                status = get_json("dtr", "lost", "-n", ns)["status"]
                self.assertEqual(sum(r.get("restarts", 0) for r in status["replicaStatuses"].values()), 0,
                                 "a replica lost with its node is not a restart")
            finally:
                node.delete()
                self.assertEqual(operator.stop(), 0)
                probe.stop()
            # No replica ever had two live pods: each name's pods came one after the other, each
            # added only once the one before it was gone.
            live = collections.defaultdict(set)
            for line in probe.lines:
                if line["event"] == "add":
                    self.assertEqual(live[line["name"]], set(), f"{line['name']}: two live pods")
                    live[line["name"]].add(line["uid"])
                elif line["event"] == "delete":
                    live[line["name"]].discard(line["uid"])
            self.assertGreaterEqual(len({line["uid"] for line in probe.find("add")}), 4 + len(on_node))


if __name__ == "__main__":
    unittest.main()
