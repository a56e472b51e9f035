"""MultiKueue between two real clusters: a DistributedTraining submitted to a manager cluster with
spec.managedBy kueue.x-k8s.io/multikueue is dispatched by Kueue's MultiKueue to a worker cluster,
runs there, and its status comes back to the manager.

The worker is the suites' cluster (kwok nodes); the manager is a second control plane with no
node (tests/e2e/control_plane.py). Each runs the pinned Kueue (the manager's with
multiKueue.externalFrameworks naming DistributedTraining) and the operator with --kueue. The
manager's Kueue reaches the worker through a kubeconfig Secret, as docs/kueue.md sets it up.
"""
import json
import os
import unittest

import yaml

from control_plane import ControlPlane, flat_kubeconfig
from crd_test import install_crd
from kube import KUBECONFIG, ROOT, apply, get_json, kubectl, wait_established, wait_until
from kueue_fixtures import KueueCase, PodWatch, cluster_queue, flavor, gpu_role, queued
from kueue_process import Kueue
from lifecycle_test import job
from operator_process import OperatorProcess

MULTIKUEUE = "kueue.x-k8s.io/multikueue"
KUEUE_NS = "kueue-system"
EXAMPLE = os.path.join(ROOT, "examples", "kueue", "multikueue-manager.yaml")
WORKER_RBAC = os.path.join(ROOT, "examples", "kueue", "multikueue-worker-rbac.yaml")
TFJOB_CRD = os.path.join(ROOT, "crds", "kubeflow.org_tfjobs.yaml")
TFJOB_FRAMEWORK = "kubeflow.org/tfjob"
MANAGER = WORKER_KUEUE = MANAGER_KUEUE = WORKER_OPERATOR = MANAGER_OPERATOR = None


def worker_kubeconfig(kubeconfig=KUBECONFIG):
    """The kubeconfig MultiKueue reaches a worker with: the ServiceAccount of
    examples/kueue/multikueue-worker-rbac.yaml (its token, so only its rules), the worker's CA
    inline."""
    if kubectl("get", "namespace", KUEUE_NS, check=False, kubeconfig=kubeconfig).returncode != 0:
        kubectl("create", "namespace", KUEUE_NS, kubeconfig=kubeconfig)
    kubectl("apply", "-f", WORKER_RBAC, kubeconfig=kubeconfig)
    token = kubectl("create", "token", "multikueue", "-n", KUEUE_NS, "--duration", "2h",
                    kubeconfig=kubeconfig).stdout.strip()
    config = yaml.safe_load(flat_kubeconfig(kubeconfig))
    config["users"][0]["user"] = {"token": token}
    return yaml.safe_dump(config)


def install_crds(kubeconfig=None):
    install_crd(kubeconfig)
    kubectl("apply", "--server-side", "--force-conflicts", "-f", TFJOB_CRD, kubeconfig=kubeconfig)
    wait_established("crd/tfjobs.kubeflow.org", kubeconfig)


def setUpModule():
    global MANAGER, WORKER_KUEUE, MANAGER_KUEUE, WORKER_OPERATOR, MANAGER_OPERATOR
    install_crds()
    MANAGER = ControlPlane("multikueue-manager").start()
    try:
        install_crds(MANAGER.kubeconfig)
        # Both Kueues with their built-in kubeflow.org/tfjob integration: MultiKueue dispatches
        # TFJobs through it (--tfjob-queueing=kueue below).
        WORKER_KUEUE = Kueue("kueue-worker", extra_frameworks=[TFJOB_FRAMEWORK]).install().start()
        # The manager's Kueue acts as its ServiceAccount: its release's rules, and
        # examples/kueue/multikueue-manager.yaml's on DistributedTrainings (applied per test).
        MANAGER_KUEUE = Kueue("kueue-manager", kubeconfig=MANAGER.kubeconfig, multikueue=True,
                              as_service_account=True, extra_frameworks=[TFJOB_FRAMEWORK]).install().start()
        flags = ("--kueue", "--tfjob", "--tfjob-queueing=kueue")
        WORKER_OPERATOR = OperatorProcess("multikueue-worker-operator", *flags).start()
        MANAGER_OPERATOR = OperatorProcess("multikueue-manager-operator", *flags,
                                           kubeconfig=MANAGER.kubeconfig).start()
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    codes = {}
    for name, op in (("worker", WORKER_OPERATOR), ("manager", MANAGER_OPERATOR)):
        if op:
            codes[name] = op.stop()
    for k in (MANAGER_KUEUE, WORKER_KUEUE):
        if k:
            k.stop()
    if WORKER_KUEUE:
        WORKER_KUEUE.uninstall()
    if MANAGER:
        MANAGER.stop()
    kubectl("delete", "-f", WORKER_RBAC, "--ignore-not-found", check=False)
    assert all(c == 0 for c in codes.values()), f"operators' exit codes on SIGTERM: {codes}"


class MultiKueueTest(KueueCase):
    """KueueCase's namespace and reads are the worker's; m_* read the manager."""

    def setUp(self):
        super().setUp()
        self.m = MANAGER.kubeconfig
        kubectl("create", "namespace", self.ns, kubeconfig=self.m)
        wait_until("the manager namespace's default service account", lambda: kubectl(
            "get", "serviceaccount", "default", "-n", self.ns, check=False, kubeconfig=self.m).returncode == 0,
            timeout=30)
        self.worker_queue()
        self.manager_queue()

    # --- set-up: the worker's queue, and the manager's queue with the MultiKueue check ---------
    def worker_queue(self):
        # The worker's LocalQueue has the manager's name (MultiKueue's remote Workload names it);
        # its own jobs of higher priority preempt the ones MultiKueue dispatched.
        self.queue_setup(gpus=8, preemption={"withinClusterQueue": "LowerPriority"})

    def manager_queue(self):
        """examples/kueue/multikueue-manager.yaml with this test's names, and its Secret."""
        m, i = self.m, self.id
        secret = f"worker-{i}"
        apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret, "namespace": KUEUE_NS},
               "stringData": {"kubeconfig": worker_kubeconfig()}}, kubeconfig=m)
        names = {"worker-1": secret, "gpu-workers": f"mk-{i}", "any-gpu": f"default-{i}",
                 "gpu-training": f"cq-{i}", "gpu": "lq", "team-a": self.ns}
        rename = lambda v: ({k: rename(x) for k, x in v.items()} if isinstance(v, dict) else
                            [rename(x) for x in v] if isinstance(v, list) else names.get(v, v))
        with open(EXAMPLE) as f:
            objects = [rename(d) for d in yaml.safe_load_all(f) if d]
        apply({"apiVersion": "v1", "kind": "List", "items": objects}, kubeconfig=m)
        for kind, name in (("multikueuecluster", secret), ("admissioncheck", f"mk-{i}"),
                           ("clusterqueue", f"cq-{i}")):
            wait_until(f"the manager's {kind} {name} to be active", lambda: any(
                c["type"] == "Active" and c["status"] == "True"
                for c in get_json(kind, name, kubeconfig=m).get("status", {}).get("conditions", [])), timeout=60)

    # --- reads of the manager ------------------------------------------------------------------
    def m_get(self, *args):
        return get_json(*args, "-n", self.ns, kubeconfig=self.m)

    def m_job(self, name):
        return self.m_get("distributedtraining", name)

    def m_workload(self, name):
        items = self.m_get("workloads.kueue.x-k8s.io", "-l", f"disttrain.io/job-name={name}")["items"]
        return items[0] if items else None

    def m_events(self, name):
        items = get_json("events", "-n", self.ns, "--field-selector",
                         f"involvedObject.name={name},involvedObject.kind=DistributedTraining",
                         kubeconfig=self.m)["items"]
        return [(e["reason"], e["message"]) for e in items]

    def remote_job(self, name):
        r = kubectl("get", "distributedtraining", name, "-n", self.ns, "-o", "json", check=False)
        return json.loads(r.stdout) if r.returncode == 0 else None

    # --- behaviours ----------------------------------------------------------------------------
    def test_a_job_is_dispatched_to_the_worker_runs_there_and_its_status_comes_back(self):
        watch = PodWatch(self.ns)  # the worker's pods
        try:
            j = queued(job("mk", Chief=gpu_role(1, 1, 0, 8), PS=gpu_role(1, 0), Worker=gpu_role(2, 1)), "lq")
            j["spec"]["managedBy"] = MULTIKUEUE
            apply(j, self.ns, kubeconfig=self.m)

            # The manager's operator makes the Workload MultiKueue acts on, owned by the job.
            wl = wait_until("the manager's Workload", lambda: self.m_workload("mk"), timeout=30)
            self.assertEqual(wl["metadata"]["ownerReferences"][0]["name"], "mk")
            self.assertEqual({p["name"]: p["count"] for p in wl["spec"]["podSets"]},
                             {"chief": 1, "ps": 1, "worker": 2})
            # Told after the pass's status write: a moment after the Workload exists.
            wait_until("CreatedWorkload told", lambda: "CreatedWorkload" in [r for r, _ in self.m_events("mk")],
                       timeout=30)

            # MultiKueue copies the job to the worker without managedBy, naming the Workload it
            # prebuilt there; the worker's operator adopts that Workload and runs the job.
            remote = wait_until("the job's copy in the worker", lambda: self.remote_job("mk"), timeout=60)
            self.assertNotIn("managedBy", remote["spec"])
            labels = remote["metadata"]["labels"]
            self.assertEqual(labels["kueue.x-k8s.io/prebuilt-workload-name"], wl["metadata"]["name"])
            self.assertIn("kueue.x-k8s.io/multikueue-origin", labels)
            wait_until("the worker's job to run", lambda: self.state("mk") in ("Running", "Succeeded"), timeout=60)
            w_wl = self.workload("mk")
            self.assertEqual(w_wl["metadata"]["name"], wl["metadata"]["name"])
            self.assertEqual(w_wl["metadata"]["ownerReferences"][0]["uid"], remote["metadata"]["uid"])

            # The worker's status is the manager's: MultiKueue copies it back.
            wait_until("the manager's job to show Running", lambda: self.m_job("mk").get("status", {}).get(
                "state") in ("Running", "Succeeded"), timeout=60)
            done = wait_until("the manager's job to succeed", lambda: self.m_job("mk").get("status", {}).get(
                "state") == "Succeeded" and self.m_job("mk"), timeout=120)
            self.assertEqual({c["type"] for c in done["status"]["conditions"] if c["status"] == "True"} & {
                "Succeeded", "Failed"}, {"Succeeded"})
            m_wl = wait_until("the manager's Workload finished", lambda: (
                lambda w: self.wl_condition(w, "Finished") and w)(self.m_workload("mk")), timeout=60)
            self.assertEqual(self.wl_condition(m_wl, "Finished")["reason"], "Succeeded")
            self.assertEqual(m_wl["status"].get("clusterName"), f"worker-{self.id}")
            # Kueue's finalizer on the manager's Workload is the manager operator's to remove.
            wait_until("the manager's Workload to lose Kueue's finalizer", lambda: not (
                self.m_workload("mk") or {}).get("metadata", {}).get("finalizers"), timeout=30)
            # MultiKueue removes the copy once the manager's Workload is finished.
            wait_until("the worker's copy to be deleted", lambda: self.remote_job("mk") is None, timeout=90)
        finally:
            watch.stop()
        # Every pod ran in the worker: the four of the job, and none in the manager.
        self.assertEqual(sorted(p for p in watch.first_seen if p), ["mk"])
        self.assertEqual(sorted(watch.seen), ["mk-chief-0", "mk-ps-0", "mk-worker-0", "mk-worker-1"])
        self.assertEqual(self.m_get("pods")["items"], [])
        self.assertEqual(self.m_get("services")["items"], [])

    def test_a_job_that_fails_in_the_worker_fails_in_the_manager_with_the_workers_reason(self):
        chief = gpu_role(1, 1, 3)
        chief["restartPolicy"] = "Never"
        j = queued(job("mkf", Chief=chief, PS=gpu_role(1, 0)), "lq")
        j["spec"]["managedBy"] = MULTIKUEUE
        apply(j, self.ns, kubeconfig=self.m)
        failed = wait_until("the manager's job to fail", lambda: self.m_job("mkf").get("status", {}).get(
            "state") == "Failed" and self.m_job("mkf"), timeout=120)
        reason = next(c for c in failed["status"]["conditions"] if c["type"] == "Failed")
        self.assertIn("exited with code 3", reason["message"])
        m_wl = wait_until("the manager's Workload finished", lambda: (
            lambda w: self.wl_condition(w, "Finished") and w)(self.m_workload("mkf")), timeout=60)
        self.assertEqual(self.wl_condition(m_wl, "Finished")["reason"], "Failed")
        self.assertIn("exited with code 3", self.wl_condition(m_wl, "Finished")["message"])
        wait_until("the worker's copy to be deleted", lambda: self.remote_job("mkf") is None, timeout=90)
        self.assertEqual(self.m_get("pods")["items"], [])

    def test_a_job_preempted_in_the_worker_is_dispatched_again_and_succeeds(self):
        # Kueue (MultiKueueRedoAdmissionOnEvictionInWorker, on by default) answers an eviction in
        # the worker by evicting the manager's Workload; its job's controller (the manager's
        # operator) gives the quota back, and the Workload is admitted and dispatched again once
        # the worker has room. MultiKueue then either removes the worker's copy and makes a new
        # one or, when the manager's Workload holds quota again before it has removed the copy
        # (seen once in CI), keeps the copy, whose Workload the worker's Kueue admits again: in
        # both, the job's pods are made again in the worker.
        grace = 3
        low = queued(job("mkp", Chief=gpu_role(1, 1, 0, 8, grace=grace), Worker=gpu_role(3, 1, grace=grace),
                         PS=gpu_role(1, 0, grace=grace)), "lq")
        low["spec"]["managedBy"] = MULTIKUEUE
        watch = PodWatch(self.ns)  # the worker's pods
        try:
            apply(low, self.ns, kubeconfig=self.m)
            wait_until("the worker's copy to run", lambda: self.state("mkp") == "Running", timeout=90)
            first_pods = [p["metadata"]["name"] for p in self.pods("mkp")]
            self.assertEqual(len(first_pods), 5)
            # A job of the worker's own, of higher priority, that does not fit beside it.
            self.priority_class(f"high-{self.id}", 1000)
            apply(queued(job("local", Chief=gpu_role(1, 1, 0, 5), Worker=gpu_role(4, 1)), "lq",
                         f"high-{self.id}"), self.ns)
            wait_until("the dispatched job's pods gone", lambda: all(n in watch.gone for n in first_pods),
                       timeout=grace + 15)
            # Until a worker's copy holds quota again, the manager's job says it waits.
            wait_until("the manager's job to show it is queued again", lambda: self.m_job("mkp").get(
                "status", {}).get("state") == "Queued", timeout=30)
            self.wait_state("local", "Succeeded", timeout=90)
            # The manager's Workload gave its quota back and was admitted and dispatched again.
            again = wait_until("the job's pods made again in the worker", lambda: all(
                len(watch.uids.get(n, ())) >= 2 for n in first_pods) and self.remote_job("mkp"), timeout=90)
            self.assertNotIn("managedBy", again["spec"])
            done = wait_until("the manager's job to succeed", lambda: self.m_job("mkp").get("status", {}).get(
                "state") == "Succeeded" and self.m_job("mkp"), timeout=120)
            m_wl = wait_until("the manager's Workload finished", lambda: (
                lambda w: self.wl_condition(w, "Finished") and w)(self.m_workload("mkp")), timeout=60)
        finally:
            watch.stop()
        self.assertEqual(self.wl_condition(m_wl, "Finished")["reason"], "Succeeded")
        self.assertEqual(m_wl["status"].get("clusterName"), f"worker-{self.id}")
        released = [m for r, m in self.m_events("mkp") if r == "QuotaReleased"]
        self.assertEqual(len(released), 1, self.m_events("mkp"))
        self.assertIn("was evicted", released[0])
        # The preemption moved the quota, never doubled it: 8 GPUs in the worker at every moment.
        self.assertLessEqual(watch.max_gpus, 8)
        self.assertEqual(sum(r.get("restarts", 0) for r in done["status"].get("replicaStatuses", {}).values()), 0)
        self.assertEqual(self.m_get("pods")["items"], [])

    def test_a_job_scaled_after_its_dispatch_runs_in_the_worker_as_it_is_now(self):
        # MultiKueue never updates a copy: the manager's operator replaces the Workload, so the
        # copy goes with the old one and the job is dispatched again as it is now.
        j = queued(job("mks", Chief=gpu_role(1, 1, 0, 12), PS=gpu_role(1, 0), Worker=gpu_role(2, 1)), "lq")
        j["spec"]["managedBy"] = MULTIKUEUE
        apply(j, self.ns, kubeconfig=self.m)
        wait_until("the worker's copy to run", lambda: self.state("mks") == "Running", timeout=90)
        first_copy = self.remote_job("mks")["metadata"]["uid"]
        kubectl("patch", "distributedtraining", "mks", "-n", self.ns, "--type", "merge", "-p",
                json.dumps({"spec": {"replicaSpecs": {"Worker": {"replicas": 3}}}}), kubeconfig=self.m)
        again = wait_until("a copy of the scaled job in the worker", lambda: (
            lambda r: r and r["metadata"]["uid"] != first_copy and r)(self.remote_job("mks")), timeout=90)
        self.assertEqual(again["spec"]["replicaSpecs"]["Worker"]["replicas"], 3)
        wait_until("the scaled job's three workers", lambda: sorted(
            p["metadata"]["name"] for p in self.pods("mks") if "worker" in p["metadata"]["name"]) == [
            "mks-worker-0", "mks-worker-1", "mks-worker-2"], timeout=60)
        wait_until("the manager's job to succeed", lambda: self.m_job("mks").get("status", {}).get(
            "state") == "Succeeded", timeout=120)
        m_wl = self.m_workload("mks")
        self.assertEqual({p["name"]: p["count"] for p in m_wl["spec"]["podSets"]},
                         {"chief": 1, "ps": 1, "worker": 3})
        self.assertIn("DeletedWorkload", [r for r, _ in self.m_events("mks")])

    def test_a_job_sent_to_a_missing_queue_says_so_in_the_manager(self):
        j = queued(job("mkq", Chief=gpu_role(1, 1, 0, 2)), "no-such-queue")
        j["spec"]["managedBy"] = MULTIKUEUE
        apply(j, self.ns, kubeconfig=self.m)
        queued_c = wait_until("the manager's job to say why it waits", lambda: next((
            c for c in self.m_job("mkq").get("status", {}).get("conditions", [])
            if c["type"] == "Queued" and c["reason"] == "Inadmissible"), None), timeout=30)
        self.assertIn("no-such-queue", queued_c["message"])
        self.assertEqual(self.m_job("mkq")["status"]["state"], "Queued")
        self.assertIn("Inadmissible", [r for r, _ in self.m_events("mkq")])
        self.assertIsNone(self.remote_job("mkq"), "nothing dispatched")

    def test_a_job_preempted_in_the_manager_gives_way_and_runs_after(self):
        # The manager's ClusterQueue preempts by priority; the WorkloadPriorityClasses exist in
        # the manager only (the worker's copies carry the priority MultiKueue gave their Workloads).
        kubectl("patch", "clusterqueue", f"cq-{self.id}", "--type", "merge", "-p",
                json.dumps({"spec": {"preemption": {"withinClusterQueue": "LowerPriority"}}}), kubeconfig=self.m)
        for name, value in ((f"low-{self.id}", 100), (f"high-{self.id}", 1000)):
            apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                   "metadata": {"name": name}, "value": value}, kubeconfig=self.m)
        grace = 3
        watch = PodWatch(self.ns)  # the worker's pods
        try:
            low = queued(job("mlow", Chief=gpu_role(1, 1, 0, 8, grace=grace), Worker=gpu_role(4, 1, grace=grace)),
                         "lq", f"low-{self.id}")
            low["spec"]["managedBy"] = MULTIKUEUE
            apply(low, self.ns, kubeconfig=self.m)
            wait_until("the low job's copy to run", lambda: self.state("mlow") == "Running", timeout=90)
            low_pods = [p["metadata"]["name"] for p in self.pods("mlow")]
            high = queued(job("mhigh", Chief=gpu_role(1, 1, 0, 4), Worker=gpu_role(4, 1)), "lq", f"high-{self.id}")
            high["spec"]["managedBy"] = MULTIKUEUE
            apply(high, self.ns, kubeconfig=self.m)
            wait_until("the low job's pods gone", lambda: all(n in watch.gone for n in low_pods), timeout=grace + 30)
            wait_until("the high job's pods", lambda: "mhigh" in watch.first_seen, timeout=60)
            self.assertLessEqual(max(watch.gone[n] for n in low_pods), watch.first_seen["mhigh"])
            for name in ("mhigh", "mlow"):
                wait_until(f"{name} to succeed in the manager", lambda: self.m_job(name).get("status", {}).get(
                    "state") == "Succeeded", timeout=150)
        finally:
            watch.stop()
        self.assertLessEqual(watch.max_gpus, 8)
        preempted = self.wl_condition(self.m_workload("mlow"), "Requeued")
        self.assertIsNotNone(preempted)
        self.assertIn("QuotaReleased", [r for r, _ in self.m_events("mlow")])

    def test_a_job_offered_to_two_workers_runs_in_the_one_that_admits_it(self):
        # A second worker: a control plane of its own (no node), its Kueue and operator, and a
        # ClusterQueue with no GPU, so only the first worker admits. MultiKueue offers the
        # Workload to both (a copy in each) and copies the job only to the worker that reserved
        # quota; the other worker's Workload copy is removed, and its operator never sees a job.
        w2 = ControlPlane("multikueue-worker-2").start()
        kueue2 = op2 = None
        try:
            k2 = w2.kubeconfig
            install_crds(k2)  # the TFJob CRD too: MultiKueue watches every kind the manager queues
            kueue2 = Kueue("kueue-worker-2", kubeconfig=k2).install().start()
            op2 = OperatorProcess("multikueue-worker-2-operator", "--kueue", kubeconfig=k2).start()
            kubectl("create", "namespace", self.ns, kubeconfig=k2)
            f2, cq2 = f"none-{self.id}", f"cq2-{self.id}"
            apply(flavor(f2), kubeconfig=k2)
            apply(cluster_queue(cq2, [f2], [0]), kubeconfig=k2)
            apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
                   "spec": {"clusterQueue": cq2}}, self.ns, kubeconfig=k2)
            second = f"worker2-{self.id}"
            apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": second, "namespace": KUEUE_NS},
                   "stringData": {"kubeconfig": worker_kubeconfig(k2)}}, kubeconfig=self.m)
            apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster", "metadata": {"name": second},
                   "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": second}}}},
                  kubeconfig=self.m)
            wait_until("the second worker to be active", lambda: any(
                c["type"] == "Active" and c["status"] == "True" for c in get_json(
                    "multikueuecluster", second, kubeconfig=self.m).get("status", {}).get("conditions", [])),
                timeout=60)
            kubectl("patch", "multikueueconfig", f"mk-{self.id}", "--type", "merge", "-p", json.dumps(
                {"spec": {"clusters": [f"worker-{self.id}", second]}}), kubeconfig=self.m)

            # The first worker holds admission until the second has its copy (else the first
            # may reserve before MultiKueue offers the Workload to the second).
            cq1 = f"cq-{self.id}"
            kubectl("patch", "clusterqueue", cq1, "--type", "merge", "-p", json.dumps({"spec": {"stopPolicy": "Hold"}}))
            j = queued(job("mk2", Chief=gpu_role(1, 1, 0, 4), Worker=gpu_role(1, 1)), "lq")
            j["spec"]["managedBy"] = MULTIKUEUE
            apply(j, self.ns, kubeconfig=self.m)
            copy2 = wait_until("the second worker's Workload copy", lambda: get_json(
                "workloads.kueue.x-k8s.io", "-n", self.ns, kubeconfig=k2)["items"], timeout=60)
            kubectl("patch", "clusterqueue", cq1, "--type", "merge", "-p", json.dumps({"spec": {"stopPolicy": "None"}}))
            wait_until("the manager's job to succeed", lambda: self.m_job("mk2").get("status", {}).get(
                "state") == "Succeeded", timeout=120)
            m_wl = self.m_workload("mk2")
            self.assertEqual(copy2[0]["metadata"]["name"], m_wl["metadata"]["name"])
            self.assertEqual(m_wl["status"].get("clusterName"), f"worker-{self.id}")
            # The second worker's copy is gone, and no job, pod or operator event was ever there.
            events = get_json("events", "-n", self.ns, kubeconfig=k2)["items"]
            self.assertNotIn("DistributedTraining", [e["involvedObject"]["kind"] for e in events])
            wait_until("the second worker's Workload copy to be deleted", lambda: get_json(
                "workloads.kueue.x-k8s.io", "-n", self.ns, kubeconfig=k2)["items"] == [], timeout=60)
            self.assertEqual(get_json("distributedtrainings", "-n", self.ns, kubeconfig=k2)["items"], [])
            self.assertEqual(get_json("pods", "-n", self.ns, kubeconfig=k2)["items"], [])
        finally:
            if op2:
                self.assertEqual(op2.stop(), 0)
            if kueue2:
                kueue2.stop()
            w2.stop()

    def test_a_tfjob_is_dispatched_through_kueues_own_tfjob_support(self):
        # MultiKueue's TFJob adapter is Kueue's built-in one (runPolicy.managedBy; the generic
        # adapter reads only spec.managedBy): in the worker, Kueue's kubeflow.org/tfjob
        # integration queues the copy and the operator runs it (--tfjob-queueing=kueue).
        gpu = lambda n, *a: gpu_role(n, 1, *a)
        tj = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
              "metadata": {"name": "tf", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
              "spec": {"runPolicy": {"managedBy": MULTIKUEUE, "cleanPodPolicy": "Running"},
                       "tfReplicaSpecs": {"Chief": gpu(1, 0, 6), "Worker": gpu(2), "PS": gpu_role(1, 0)}}}
        apply(tj, self.ns, kubeconfig=self.m)
        m_tf = lambda: get_json("tfjob", "tf", "-n", self.ns, kubeconfig=self.m)
        succeeded = lambda j: any(c["type"] == "Succeeded" and c["status"] == "True"
                                  for c in j.get("status", {}).get("conditions", []))
        wait_until("the worker's copy to run", lambda: get_json(
            "pods", "-n", self.ns, "-l", "training.kubeflow.org/job-name=tf")["items"], timeout=90)
        done = wait_until("the manager's TFJob to succeed", lambda: succeeded(m_tf()) and m_tf(), timeout=120)
        self.assertEqual(done["status"]["replicaStatuses"]["Chief"]["succeeded"], 1)
        wl = [w for w in self.m_get("workloads.kueue.x-k8s.io")["items"]
              if w["metadata"]["ownerReferences"][0]["kind"] == "TFJob"]
        self.assertEqual(len(wl), 1, "Kueue's own Workload, none of the operator's")
        self.assertEqual(wl[0]["status"].get("clusterName"), f"worker-{self.id}")
        wait_until("the worker's copy to be deleted", lambda: kubectl(
            "get", "tfjob", "tf", "-n", self.ns, check=False).returncode != 0, timeout=90)
        self.assertEqual(self.m_get("pods")["items"], [])


if __name__ == "__main__":
    unittest.main()
