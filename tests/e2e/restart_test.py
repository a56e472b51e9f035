"""An operator SIGKILLed in the middle of creating a job's pods, then restarted, creates no
duplicates and loses no job: the restarted operator finishes the creation and runs the job.

Duplicates are observed, not inferred from what is left at the end: informer probes watch the
job's pods and Services from before the first operator starts, so every object ever created is
seen with its UID, including the ones cleanup deletes later."""
import collections
import unittest

from crd_test import install_crd
from kube import Namespace, apply, get_json, wait_until
from lifecycle_test import job, role
from operator_process import OperatorProcess
from probe import Probe

PODS = 1 + 2 + 20  # chief, parameter servers, workers


def created(probe):
    """name -> set of UIDs of every object the probe saw created."""
    uids = collections.defaultdict(set)
    for line in probe.find("add"):
        uids[line["name"]].add(line["uid"])
    return uids


class OperatorRestartTest(unittest.TestCase):
    def test_sigkill_mid_creation_then_restart_creates_no_duplicates(self):
        install_crd()
        with Namespace("restart") as ns:
            selector = "disttrain.io/job-name=big"
            pods, services = Probe(ns, selector), Probe(ns, selector, resource="services")
            try:
                # A slow client (2 requests/s) so that the kill lands mid-creation.
                slow = OperatorProcess("restart-slow", "--kube-api-qps", "2", "--kube-api-burst", "1").start()
                try:
                    apply(job("big", Chief=role(1, 0, 6), PS=role(2), Worker=role(20)), ns)
                    wait_until("a few pods to exist", lambda: 3 <= len(created(pods)) < PODS, timeout=60)
                finally:
                    slow.kill()
                    slow.stop()
                before = {name: next(iter(u)) for name, u in created(pods).items()}
                self.assertLess(len(before), PODS, "the kill came after every pod was created")

                fresh = OperatorProcess("restart-fresh").start()
                try:
                    wait_until("the job to succeed", lambda: get_json("dtr", "big", "-n", ns).get(
                        "status", {}).get("state") == "Succeeded", timeout=90)
                    # Cleanup deletes the parameter servers and workers; the probes saw them all.
                    wait_until("the probes to see the cleanup",
                               lambda: len(pods.find("delete")) >= PODS - 1, timeout=60)
                finally:
                    self.assertEqual(fresh.stop(), 0)
                pod_uids, service_uids = created(pods), created(services)
            finally:
                pods.stop()
                services.stop()
            # Every pod and Service name was created exactly once, by one of the two operators.
            self.assertEqual({n: len(u) for n, u in pod_uids.items() if len(u) > 1}, {}, "pods created twice")
            self.assertEqual({n: len(u) for n, u in service_uids.items() if len(u) > 1}, {},
                             "Services created twice")
            self.assertEqual(len(pod_uids), PODS)
            self.assertEqual(len(service_uids), 1)  # the job's one
            # Pods that existed before the kill were kept, not recreated.
            for name, uid in before.items():
                self.assertEqual(pod_uids[name], {uid}, f"{name} was recreated")


if __name__ == "__main__":
    unittest.main()
