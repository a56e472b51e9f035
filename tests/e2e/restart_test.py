"""An operator SIGKILLed in the middle of creating a job's pods, then restarted, creates no
duplicates and loses no job: the restarted operator finishes the creation and runs the job."""
import unittest

from crd_test import install_crd
from kube import Namespace, apply, get_json, wait_until
from lifecycle_test import job, role
from operator_process import OperatorProcess


class OperatorRestartTest(unittest.TestCase):
    def test_sigkill_mid_creation_then_restart_creates_no_duplicates(self):
        install_crd()
        with Namespace("restart") as ns:
            # A slow client (2 requests/s) so that the kill lands mid-creation.
            slow = OperatorProcess("restart-slow", "--kube-api-qps", "2", "--kube-api-burst", "1").start()
            try:
                apply(job("big", Chief=role(1, 0, 6), PS=role(2), Worker=role(20)), ns)

                def some_pods():
                    n = len(get_json("pods", "-n", ns, "-l", "disttrain.io/job-name=big")["items"])
                    return 3 <= n < 23 and n
                created_before = wait_until("a few pods to exist", some_pods, timeout=60)
            finally:
                slow.kill()
                slow.stop()
            before = {p["metadata"]["name"]: p["metadata"]["uid"]
                      for p in get_json("pods", "-n", ns, "-l", "disttrain.io/job-name=big")["items"]}
            self.assertLess(len(before), 23, "the kill came after every pod was created")

            fresh = OperatorProcess("restart-fresh").start()
            try:
                wait_until("the job to succeed", lambda: get_json("dtr", "big", "-n", ns).get(
                    "status", {}).get("state") == "Succeeded", timeout=90)
                pods = get_json("pods", "-n", ns, "-l", "disttrain.io/job-name=big")["items"]
                services = get_json("services", "-n", ns, "-l", "disttrain.io/job-name=big")["items"]
                events = get_json("events", "-n", ns, "--field-selector", "involvedObject.name=big")["items"]
            finally:
                self.assertEqual(fresh.stop(), 0)
            # Pods that existed before the kill were kept, not recreated.
            for p in pods:
                name = p["metadata"]["name"]
                if name in before:
                    self.assertEqual(p["metadata"]["uid"], before[name], f"{name} was recreated")
            # Every name at most once (the parameter servers and workers were cleaned up since).
            self.assertEqual(len({s["metadata"]["name"] for s in services}), len(services))
            created = sum(len(e["message"].split(",")) for e in events if e["reason"] == "SuccessfulCreatePod")
            self.assertGreaterEqual(created + len(before), 23)
            self.assertGreater(created_before, 0)


if __name__ == "__main__":
    unittest.main()
