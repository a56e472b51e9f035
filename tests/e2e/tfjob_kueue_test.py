"""TFJobs queued by Kueue's own kubeflow.org/tfjob integration while disttrain runs them
(--tfjob --tfjob-queueing=kueue), as on a cluster that swaps the training-operator for disttrain
and leaves Kueue's configuration as it was: Kueue's webhook suspends each queued TFJob, Kueue makes
its Workload and resumes the job on admission with the flavour's node labels; the operator runs
what Kueue resumes and stops what Kueue suspends again. DistributedTrainings in the same queue
are queued by the operator's own Workloads (--kueue) beside them.

Kueue is the pinned upstream manager (tests/e2e/kueue_process.py) with batch/job and
kubeflow.org/tfjob enabled, DistributedTraining in externalFrameworks, webhooks served.
"""
import os
import unittest

from crd_test import install_crd
from kube import ROOT, apply, get_json, kubectl, wait_until
from kueue_fixtures import KueueCase, PodWatch, gpu_role, queued
from kueue_process import Kueue
from lifecycle_test import job
from operator_process import OperatorProcess

TFJOB_CRD = os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml")
KUEUE = OPERATOR = None


def setUpModule():
    global KUEUE, OPERATOR
    install_crd()
    kubectl("apply", "--server-side", "--force-conflicts", "-f", TFJOB_CRD)
    kubectl("wait", "--for=condition=Established", "crd/tfjobs.kubeflow.org", "--timeout=30s")
    KUEUE = Kueue("kueue-tfjob", extra_frameworks=["kubeflow.org/tfjob"]).install().start()
    OPERATOR = OperatorProcess("tfjob-kueue", "--kueue", "--tfjob", "--tfjob-queueing=kueue",
                               "--workers", "4").start()


def tearDownModule():
    code = OPERATOR.stop() if OPERATOR else 0
    if KUEUE:
        KUEUE.stop()
        KUEUE.uninstall()
    assert code == 0, f"operator exited {code} on SIGTERM"


def tfjob(name, chief_seconds, workers=3):
    """A chief (1 GPU) that succeeds after chief_seconds, `workers` workers of 1 GPU, a CPU PS."""
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": {
                "Chief": gpu_role(1, 1, 0, chief_seconds), "Worker": gpu_role(workers, 1),
                "PS": gpu_role(1, 0)}}}


class TfJobUnderKueueTest(KueueCase):
    def tfjob(self, name):
        return get_json("tfjob", name, "-n", self.ns)

    def tf_condition(self, name, ctype):
        return next((c for c in self.tfjob(name).get("status", {}).get("conditions", [])
                     if c["type"] == ctype and c["status"] == "True"), None)

    def tf_pods(self, name):
        return [p for p in get_json("pods", "-n", self.ns, "-l", f"training.kubeflow.org/job-name={name}")["items"]
                if not p["metadata"].get("deletionTimestamp")]

    def workloads_of(self, kind, name):
        return [w for w in get_json("workloads.kueue.x-k8s.io", "-n", self.ns)["items"]
                if any(o["kind"] == kind and o["name"] == name for o in w["metadata"].get("ownerReferences", []))]

    def test_kueue_queues_tfjobs_and_the_operator_queues_distributedtrainings_beside_them(self):
        self.queue_setup(gpus=4)
        watch = PodWatch(self.ns)
        try:
            apply(queued(tfjob("t1", 8), "lq"), self.ns)
            wait_until("t1 to run", lambda: self.tf_condition("t1", "Running"), timeout=60)
            # The second TFJob does not fit: Kueue's webhook suspended it, and it stays so with no
            # pod, its status saying so, until t1 ends.
            apply(queued(tfjob("t2", 4), "lq"), self.ns)
            apply(queued(job("d1", Chief=gpu_role(1, 1, 0, 4), Worker=gpu_role(3, 1), PS=gpu_role(1, 0)), "lq"),
                  self.ns)
            wait_until("t2 suspended by Kueue", lambda: self.tfjob("t2")["spec"]["runPolicy"].get("suspend")
                       and self.tf_condition("t2", "Suspended"), timeout=30)
            self.assertEqual(self.tf_pods("t2"), [])
            for n in ("t1", "t2"):
                wait_until(f"{n} to succeed", lambda: self.tf_condition(n, "Succeeded"), timeout=120)
            self.wait_state("d1", "Succeeded", timeout=120)
            wait_until("every pod ended", lambda: not watch.live, timeout=60)
        finally:
            watch.stop()
        self.assertLessEqual(watch.max_gpus, 4, "never more GPUs of pods than the ClusterQueue's quota")
        # One Workload per job: Kueue's for each TFJob (none of the operator's), the operator's for
        # the DistributedTraining; each Finished with the job's outcome.
        for kind, name in (("TFJob", "t1"), ("TFJob", "t2"), ("DistributedTraining", "d1")):
            wls = self.workloads_of(kind, name)
            self.assertEqual(len(wls), 1, f"{kind} {name}: {[w['metadata']['name'] for w in wls]}")
            # Kueue marks a TFJob's Workload Finished on its own reconcile, after the job's
            # Succeeded condition: wait for it rather than read it once.
            finished = wait_until(f"{kind} {name}'s Workload to finish", lambda: self.wl_condition(
                self.workloads_of(kind, name)[0], "Finished"), timeout=30)
            self.assertEqual(finished["reason"], "Succeeded", name)
        self.assertTrue(self.workloads_of("TFJob", "t1")[0]["metadata"]["name"].startswith("tfjob-t1-"),
                        "Kueue's own name for a TFJob's Workload")

    def test_a_tfjob_evicted_by_kueue_is_stopped_and_runs_again_when_readmitted(self):
        self.queue_setup(gpus=4)
        apply(queued(tfjob("long", 3600), "lq"), self.ns)
        wait_until("5 pods running", lambda: len(self.tf_pods("long")) == 5, timeout=60)
        wl = self.workloads_of("TFJob", "long")[0]["metadata"]["name"]
        kubectl("patch", "workloads.kueue.x-k8s.io", wl, "-n", self.ns, "--type=merge",
                "-p", '{"spec":{"active":false}}')
        # Kueue suspends the TFJob; the operator stops every pod and says the job is suspended.
        wait_until("every pod gone", lambda: not get_json("pods", "-n", self.ns, "-l",
                                                          "training.kubeflow.org/job-name=long")["items"], timeout=60)
        self.assertTrue(self.tfjob("long")["spec"]["runPolicy"]["suspend"])
        wait_until("the TFJob to say it is suspended", lambda: self.tf_condition("long", "Suspended"), timeout=30)
        kubectl("patch", "workloads.kueue.x-k8s.io", wl, "-n", self.ns, "--type=merge",
                "-p", '{"spec":{"active":true}}')
        wait_until("5 pods running again", lambda: len(self.tf_pods("long")) == 5, timeout=60)
        wait_until("the TFJob to run again", lambda: self.tf_condition("long", "Running"), timeout=30)
        self.assertEqual(len(self.workloads_of("TFJob", "long")), 1)


if __name__ == "__main__":
    unittest.main()
