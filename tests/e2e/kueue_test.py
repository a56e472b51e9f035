"""DistributedTraining under a real Kueue (tests/e2e/kueue_process.py): quota, flavours,
priority and preemption, reclaimable pods, bad input and Kueue outages, against the operator
run with --kueue. Kueue is the pinned upstream manager with its webhooks, the nodes are kwok's
(two extra GPU node kinds for the flavours), and pods are watched as they come and go.
"""
import calendar
import json
import os
import time
import unittest

import yaml

from crd_test import install_crd
from kube import ROOT, apply, get_json, kubectl, wait_until
from kueue_fixtures import JobWatch, GPU, KueueCase, PodWatch, flavor, gpu_role, queued
from kueue_process import Kueue
from lifecycle_test import job
from operator_process import OperatorProcess

OPERATOR = None
KUEUE = None
FLAVOR_NODES = {"a": "kueue-gpu-a-0", "b": "kueue-gpu-b-0"}
TAS_BLOCK, TAS_RACK = "topology.example.com/block", "topology.example.com/rack"
# Two racks of two hosts, 4 GPUs each, for topology-aware scheduling: node -> its rack.
TAS_NODES = {f"kueue-tas-r{r}-h{h}": f"r{r}" for r in (1, 2) for h in (1, 2)}


def setUpModule():
    global OPERATOR, KUEUE
    install_crd()
    KUEUE = Kueue().install().start()
    OPERATOR = OperatorProcess("kueue-operator", "--kueue", "--workers", "4").start()
    nodes = []
    for kind, name in FLAVOR_NODES.items():
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                             "labels": {"kubernetes.io/hostname": name, "type": "kwok-flavor",
                                        "disttrain.io/gpu-kind": kind}},
                "spec": {}, "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "300", GPU: "8"},
                                       "capacity": {"cpu": "64", "memory": "512Gi", "pods": "300", GPU: "8"}}}
        if kind == "b":  # only pods that tolerate it land on a b node
            node["spec"]["taints"] = [{"key": "disttrain.io/gpu-kind", "value": "b", "effect": "NoSchedule"}]
        nodes.append(node)
    for name, rack in TAS_NODES.items():
        capacity = {"cpu": "16", "memory": "64Gi", "pods": "110", GPU: "4"}
        nodes.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                   "labels": {"kubernetes.io/hostname": name, "type": "kwok-tas",
                                              TAS_BLOCK: "b1", TAS_RACK: rack}},
                      "spec": {}, "status": {"allocatable": capacity, "capacity": capacity}})
    apply({"apiVersion": "v1", "kind": "List", "items": nodes})
    kubectl("wait", "--for=condition=Ready", "node", "-l", "type=kwok-flavor", "--timeout=60s")
    kubectl("wait", "--for=condition=Ready", "node", "-l", "type=kwok-tas", "--timeout=60s")


def tearDownModule():
    kubectl("delete", "node", *FLAVOR_NODES.values(), *TAS_NODES, "--ignore-not-found", check=False)
    code = OPERATOR.stop()
    KUEUE.stop()
    KUEUE.uninstall()
    assert code == 0, f"operator exited {code} on SIGTERM"


class KueueTest(KueueCase):
    # --- behaviours ----------------------------------------------------------------------------
    def test_quota_holds_jobs_until_admitted_in_queue_and_priority_order(self):
        self.queue_setup(gpus=8)
        self.priority_class(f"high-{self.id}", 1000)
        watch = PodWatch(self.ns)
        jobs = JobWatch(self.ns)
        try:
            names = [f"q{i}" for i in range(6)]
            for i, n in enumerate(names):
                # 4 GPUs each: a chief (1) that succeeds after 12 s and 3 workers (1 each), plus a CPU-only PS.
                j = job(n, Chief=gpu_role(1, 1, 0, 12), Worker=gpu_role(3, 1), PS=gpu_role(1, 0))
                apply(queued(j, "lq", f"high-{self.id}" if i == 5 else None), self.ns)
                # Kueue orders equal priorities by creation time, which has 1 s resolution.
                wait_until(f"{n}'s Workload", lambda: self.workload(n), timeout=10)
                time.sleep(1.05)
            # Two fit; the four others are held, Queued with Kueue's reason, before any pod of
            # theirs exists (seen by watches: a loaded machine may poll after they moved on).
            wait_until("two jobs admitted", lambda: len(watch.first_seen) == 2, timeout=30)
            for n in names:
                self.wait_state(n, "Succeeded", timeout=120)
            wait_until("every pod ended", lambda: not watch.live, timeout=60)
        finally:
            watch.stop()
            jobs.stop()
        for n in names[2:]:
            self.assertIsNotNone(jobs.queued_at(n), f"{n} was never Queued")
            self.assertLess(jobs.queued_at(n), watch.first_seen[n], f"{n} had a pod before it was Queued")
        self.assertLessEqual(watch.max_gpus, 8, "never more GPUs of pods than the ClusterQueue's quota")
        self.assertGreaterEqual(watch.max_gpus, 8, "two jobs ran at once")
        order = sorted(names, key=lambda n: watch.first_seen[n])
        self.assertEqual(set(order[:2]), {"q0", "q1"})
        # The four held jobs start in two waves, as the first two (then the next two) end together:
        # q5, created last but of high priority, in the first wave with q2, the oldest; q3 and q4
        # after. Within a wave the two pods' order is the operator's race (a CI run saw q2 before q5
        # and q4 before q3), so only the waves are compared.
        self.assertEqual(set(order[2:4]), {"q5", "q2"}, f"the high-priority job goes first, then FIFO: {order}")
        self.assertEqual(set(order[4:]), {"q3", "q4"}, order)
        for n in names:
            wl = self.workload(n)
            self.assertEqual(wl["metadata"]["ownerReferences"][0]["name"], n)
            self.assertEqual(wl["metadata"]["labels"]["kueue.x-k8s.io/job-uid"], self.job(n)["metadata"]["uid"])
            self.assertEqual({p["name"]: p["count"] for p in wl["spec"]["podSets"]},
                             {"chief": 1, "ps": 1, "worker": 3})
            self.assertEqual(self.wl_condition(wl, "Finished")["reason"], "Succeeded")
            self.assertEqual(self.restarts(n), 0)
        self.assertEqual(self.workload("q5")["spec"]["priority"], 1000)

    def test_an_elastic_job_is_admitted_partially_and_runs_with_the_workers_admitted(self):
        # 5 workers of 1 GPU against a quota of 3: with elasticPolicy.minReplicas 2 the Worker
        # PodSet carries minCount 2, Kueue admits 3 (partial admission), and the job runs with
        # those 3, its TF_CONFIG naming them. Without minCount it would wait for all 5.
        self.queue_setup(gpus=3)
        j = job("part", Chief=gpu_role(1, 0), PS=gpu_role(1, 0), Worker=gpu_role(5, 1))
        j["spec"]["elasticPolicy"] = {"minReplicas": 2, "maxReplicas": 5}
        apply(queued(j, "lq"), self.ns)
        self.wait_state("part", "Running", timeout=60)
        wl = self.workload("part")
        workers = next(p for p in wl["spec"]["podSets"] if p["name"] == "worker")
        self.assertEqual((workers["count"], workers["minCount"]), (5, 2))
        assigned = {a["name"]: a["count"] for a in wl["status"]["admission"]["podSetAssignments"]}
        self.assertEqual(assigned["worker"], 3)
        self.assertEqual(sorted(p["metadata"]["name"] for p in self.pods("part")),
                         ["part-chief-0", "part-ps-0", "part-worker-0", "part-worker-1", "part-worker-2"])
        queued_condition = self.condition("part", "Queued")
        self.assertEqual(queued_condition["reason"], "Admitted")
        self.assertIn("(partially: 3 of 5 workers, elasticPolicy.minReplicas 2)", queued_condition["message"])
        pod = get_json("pod", "part-worker-0", "-n", self.ns)
        tf_config = json.loads(next(e["value"] for e in pod["spec"]["containers"][0]["env"] if e["name"] == "TF_CONFIG"))
        self.assertEqual(len(tf_config["cluster"]["worker"]), 3, tf_config)
        self.assertEqual(self.job("part")["status"]["replicaStatuses"]["Worker"]["progress"], "3/3")
        # Admitted at once: Kueue costs the job no event of its own (each is an API write); the
        # one that says its pods were created names the Workload and the ClusterQueue.
        news = f"Workload {wl['metadata']['name']} admitted by ClusterQueue "
        wait_until("the pods' event", lambda: any(
            r == "SuccessfulCreatePod" and news in m for r, m in self.events("part")), timeout=10)
        self.assertEqual([r for r, _ in self.events("part") if r in ("CreatedWorkload", "Queued", "Admitted")], [])

    def prebuilt_workload(self, name, counts):
        """A Workload as MultiKueue creates it in a worker cluster, before the job it copies: no
        owner, the manager's PodSets and queue."""
        def pod_set(role, count):
            requests = {"cpu": "1", "memory": "1Gi"}
            if role == "worker":
                requests[GPU] = "1"
            return {"name": role, "count": count, "template": {"spec": {"containers": [
                {"name": "tensorflow", "image": "registry.example/trainer:1",
                 "resources": {"requests": requests, "limits": {GPU: "1"} if role == "worker" else {}}}]}}}
        apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
               "metadata": {"name": name, "labels": {"kueue.x-k8s.io/multikueue-origin": "manager"}},
               "spec": {"queueName": "lq", "podSets": [pod_set(r, n) for r, n in counts.items()]}}, self.ns)

    def test_a_job_copied_by_multikueue_adopts_its_prebuilt_workload(self):
        # MultiKueue's worker-cluster side: the job arrives labelled with the Workload made for it
        # (kueue.x-k8s.io/prebuilt-workload-name). The operator adopts that Workload (controller
        # owner, its labels) instead of making its own, Kueue admits it, the job runs and the
        # Workload is Finished. One whose PodSets do not match the job fails the job, as Kueue's
        # own controllers refuse it ("out of sync").
        self.queue_setup(gpus=8)
        self.prebuilt_workload("copy-remote", {"chief": 1, "ps": 1, "worker": 2})
        j = queued(job("copy", Chief=gpu_role(1, 0, 0, 5), PS=gpu_role(1, 0), Worker=gpu_role(2, 1)), "lq")
        j["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "copy-remote"
        apply(j, self.ns)
        self.wait_state("copy", "Succeeded", timeout=90)
        workloads = get_json("workloads.kueue.x-k8s.io", "-n", self.ns)["items"]
        self.assertEqual([w["metadata"]["name"] for w in workloads], ["copy-remote"], "no Workload of its own")
        wl = workloads[0]
        owner = next(o for o in wl["metadata"]["ownerReferences"] if o.get("controller"))
        self.assertEqual((owner["kind"], owner["name"], owner["uid"]),
                         ("DistributedTraining", "copy", self.job("copy")["metadata"]["uid"]))
        self.assertEqual(wl["metadata"]["labels"]["kueue.x-k8s.io/multikueue-origin"], "manager")
        wait_until("the Workload Finished", lambda: (c := self.wl_condition(
            get_json("workloads.kueue.x-k8s.io", "copy-remote", "-n", self.ns), "Finished")) and c, timeout=30)
        self.assertIn(("AdoptedWorkload", "adopted the prebuilt Workload copy-remote"),
                      self.wait_event("copy", "AdoptedWorkload"))

        self.prebuilt_workload("bad-remote", {"chief": 1, "worker": 2})
        b = queued(job("bad", Chief=gpu_role(1, 0), Worker=gpu_role(3, 1)), "lq")
        b["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "bad-remote"
        apply(b, self.ns)
        failed = self.wait_state("bad", "Failed", timeout=30)
        c = next(c for c in failed["status"]["conditions"] if c["type"] == "Failed")
        self.assertEqual(c["reason"], "WorkloadOutOfSync")
        self.assertIn("its podSets are [chief 1, worker 2], the job's [chief 1, worker 3]", c["message"])
        self.assertEqual(self.pods("bad"), [])

    def test_admitted_pods_carry_their_flavour_and_land_on_its_nodes(self):
        fa, fb = flavor(f"fa-{self.id}", "a"), flavor(f"fb-{self.id}", "b")
        self.queue_setup(gpus=[4, 8], flavors=[fa, fb])
        apply(queued(job("fa", Worker=gpu_role(2, 2), PS=gpu_role(1, 0)), "lq"), self.ns)
        wait_until("fa's pods", lambda: len(self.pods("fa")) == 3, timeout=30)
        apply(queued(job("fb", Worker=gpu_role(2, 2), PS=gpu_role(1, 0)), "lq"), self.ns)
        wait_until("fb's pods", lambda: len(self.pods("fb")) == 3, timeout=30)
        kinds = {fa["metadata"]["name"]: "a", fb["metadata"]["name"]: "b"}
        for name in ("fa", "fb"):
            wait_until(f"{name}'s pods scheduled", lambda: all(p["spec"].get("nodeName") for p in self.pods(name)),
                       timeout=30)
            # Kueue picks a flavour per pod set: fa's GPUs fill flavour a, so fb's workers go to b.
            assigned = {a["name"]: kinds[a["flavors"][GPU if GPU in a["flavors"] else "cpu"]]
                        for a in self.workload(name)["status"]["admission"]["podSetAssignments"]}
            self.assertEqual(assigned["worker"], "a" if name == "fa" else "b")
            for p in self.pods(name):
                spec = p["spec"]
                kind = assigned[p["metadata"]["labels"]["disttrain.io/replica-type"]]
                self.assertEqual(spec["nodeSelector"].get("disttrain.io/gpu-kind"), kind, p["metadata"]["name"])
                self.assertEqual(spec["nodeName"], FLAVOR_NODES[kind])
                labels = p["metadata"]["labels"]
                self.assertEqual(labels["kueue.x-k8s.io/podset"], labels["disttrain.io/replica-type"])
                tolerated = any(t.get("key") == "disttrain.io/gpu-kind" for t in spec.get("tolerations", []))
                self.assertEqual(tolerated, kind == "b")
            admitted = self.condition(name, "Queued")
            self.assertEqual((admitted["status"], admitted["reason"]), ("False", "Admitted"))
            self.wait_state(name, "Running", timeout=30)

    def test_a_job_whose_ps_and_workers_must_share_a_rack_lands_in_one_and_one_too_wide_waits(self):
        # Kueue's topology-aware scheduling (docs/notes/kueue-topology.md): block > rack > host on
        # four simulated nodes of 4 GPUs, two racks; the job's ps and workers ask for one rack.
        topology = f"topo-{self.id}"
        self.cluster_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": topology},
                             "spec": {"levels": [{"nodeLabel": TAS_BLOCK}, {"nodeLabel": TAS_RACK},
                                                 {"nodeLabel": "kubernetes.io/hostname"}]}})
        tas = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": f"tas-{self.id}"},
               "spec": {"nodeLabels": {"type": "kwok-tas"}, "topologyName": topology}}
        # More quota than the nodes hold: what stops a job here is the topology, not the quota.
        self.queue_setup(gpus=[32], flavors=[tas])

        def in_one_rack(role, group="ps-workers"):
            role["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] = TAS_RACK
            if group:
                role["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-group-name"] = group
            return role

        apply(queued(job("rack", PS=in_one_rack(gpu_role(1, 0)), Worker=in_one_rack(gpu_role(3, 2))), "lq"),
              self.ns)
        request = wait_until("the Workload", lambda: self.workload("rack"))["spec"]["podSets"]
        self.assertEqual({p["name"]: p.get("topologyRequest") for p in request}, {
            role: {"required": TAS_RACK, "podSetGroupName": "ps-workers",
                   "podIndexLabel": "disttrain.io/replica-index"} for role in ("ps", "worker")})
        wait_until("rack's four pods placed", lambda: len(self.pods("rack")) == 4 and all(
            p["spec"].get("nodeName") for p in self.pods("rack")), timeout=60)
        racks = {TAS_NODES[p["spec"]["nodeName"]] for p in self.pods("rack")}
        self.assertEqual(len(racks), 1, f"ps and workers across racks: {racks}")
        for p in self.pods("rack"):
            self.assertEqual(p["metadata"]["annotations"]["kueue.x-k8s.io/workload"], self.workload("rack")["metadata"]["name"])
            self.assertFalse(p["spec"].get("schedulingGates"), "Kueue's ungater lifted the topology gate")
        self.wait_state("rack", "Running", timeout=30)

        # 3 workers of 4 GPUs fit the quota but no rack (8 GPUs each): the job waits, saying why.
        apply(queued(job("wide", Worker=in_one_rack(gpu_role(3, 4), group=None)), "lq"), self.ns)
        queued_condition = wait_until("wide to wait for a rack", lambda: (self.condition("wide", "Queued") or {}).get(
            "message", "").find("topology") >= 0 and self.condition("wide", "Queued"), timeout=60)
        self.assertEqual((queued_condition["status"], queued_condition["reason"]), ("True", "Pending"))
        self.assertIn("couldn't assign flavors to pod set worker", queued_condition["message"])
        self.assertEqual(self.pods("wide"), [])

    def test_preempted_job_stops_within_its_grace_is_requeued_and_finishes_without_restarts(self):
        self.queue_setup(gpus=4, preemption={"withinClusterQueue": "LowerPriority"})
        self.priority_class(f"low-{self.id}", 100)
        self.priority_class(f"high-{self.id}", 1000)
        grace = 3
        apply(queued(job("low", Chief=gpu_role(1, 1, 0, 6, grace=grace), Worker=gpu_role(3, 1, grace=grace),
                         PS=gpu_role(1, 0, grace=grace)), "lq", f"low-{self.id}"), self.ns)
        self.wait_state("low", "Running", timeout=30)
        watch = PodWatch(self.ns)
        low_pods = [p["metadata"]["name"] for p in self.pods("low")]
        self.assertEqual(len(low_pods), 5)
        try:
            apply(queued(job("high", Chief=gpu_role(1, 1, 0, 5), Worker=gpu_role(3, 1)), "lq", f"high-{self.id}"),
                  self.ns)
            evicted = wait_until("low's Workload evicted", lambda: self.wl_condition(self.workload("low"), "Evicted"),
                                 timeout=30)
            self.assertEqual(evicted["reason"], "Preempted")
            wait_until("low's pods gone", lambda: all(n in watch.gone for n in low_pods), timeout=grace + 10)
            evicted_at = calendar.timegm(time.strptime(evicted["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ"))
            # The condition's time has 1 s resolution: within the grace period + 2 s, +1 for rounding.
            self.assertLessEqual(max(watch.gone_wall[n] for n in low_pods) - evicted_at, grace + 3)
            c = wait_until("low queued again", lambda: (self.condition("low", "Queued") or {}).get("status") == "True"
                           and self.condition("low", "Queued"), timeout=10)
            self.assertEqual(c["reason"], "Preempted")
            preempted = wait_until("the Preempted event", lambda: get_json(
                "events", "-n", self.ns, "--field-selector", "involvedObject.name=low,reason=Preempted")["items"],
                timeout=30)
            self.assertIn("Warning", [e["type"] for e in preempted])
            # The high job's pods appear only once the low job's are gone (the quota moved, not doubled).
            wait_until("high's pods", lambda: "high" in watch.first_seen, timeout=30)
            last_gone = max(watch.gone[n] for n in low_pods)
            self.assertLessEqual(last_gone, watch.first_seen["high"])
            self.assertLessEqual(watch.max_gpus, 4)
            self.wait_state("high", "Succeeded", timeout=60)
            # Re-admitted once high finished; its pods run again and it succeeds with no restart counted.
            self.wait_state("low", "Succeeded", timeout=90)
        finally:
            watch.stop()
        self.assertEqual(self.restarts("low"), 0)
        self.assertNotIn("BackoffLimitExceeded", [r for r, _ in self.events("low")])
        requeued = self.wl_condition(self.workload("low"), "Requeued")
        self.assertIsNotNone(requeued)

    def test_workers_done_give_their_quota_back_before_the_job_ends(self):
        self.queue_setup(gpus=8)
        # Four workers of 2 GPUs succeed after 2 s; the chief (no GPU) goes on for 25 s.
        apply(queued(job("long", Chief=gpu_role(1, 0, 0, 25), Worker=gpu_role(4, 2, 0, 2)), "lq"), self.ns)
        wait_until("long's pods", lambda: len(self.pods("long")) == 5, timeout=30)
        apply(queued(job("next", Worker=gpu_role(2, 2)), "lq"), self.ns)
        # The count grows as the workers end (each pass of the operator counts the ones it saw).
        reclaimable = lambda: self.workload("long").get("status", {}).get("reclaimablePods")
        wait_until("all four workers reclaimable on long's Workload",
                   lambda: reclaimable() == [{"name": "worker", "count": 4}], timeout=30)
        wait_until("next's pods", lambda: len(self.pods("next")) == 2, timeout=30)
        self.assertEqual(self.state("long"), "Running", "next was admitted before long ended")
        self.wait_state("long", "Succeeded", timeout=60)

    def test_under_wait_for_pods_ready_a_running_job_stays_and_one_never_ready_is_evicted(self):
        # Kueue's waitForPodsReady evicts an admitted Workload whose PodsReady is not True within
        # the timeout; only the job's controller writes PodsReady (Kueue never does).
        KUEUE.stop()
        KUEUE.wait_for_pods_ready = "15s"
        KUEUE.start()
        try:
            self.queue_setup(gpus=8)
            apply(queued(job("ready", Chief=gpu_role(1, 0, 0, 40), Worker=gpu_role(2, 1)), "lq"), self.ns)
            stuck = job("stuck", Worker=gpu_role(2, 1))  # its pods fit no node: never ready
            stuck["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {"disttrain.io/none": "x"}
            apply(queued(stuck, "lq"), self.ns)
            self.wait_state("ready", "Running", timeout=30)
            wl = wait_until("PodsReady on ready's Workload", lambda: (
                (self.wl_condition(self.workload("ready"), "PodsReady") or {}).get("status") == "True"
                and self.workload("ready")), timeout=30)
            evicted = wait_until("stuck evicted for PodsReadyTimeout", lambda: (
                (self.wl_condition(self.workload("stuck"), "Evicted") or {}).get("reason") == "PodsReadyTimeout"
                and self.wl_condition(self.workload("stuck"), "Evicted")), timeout=60)
            self.assertIn("Exceeded the PodsReady timeout", evicted["message"])
            c = wait_until("stuck queued again", lambda: (self.condition("stuck", "Queued") or {}).get("status")
                           == "True" and self.condition("stuck", "Queued"), timeout=30)
            self.assertIn("PodsReady", c["message"] + c["reason"])
            self.assertEqual(self.restarts("stuck"), 0)
            # Past the timeout, ready's Workload was never evicted and its job runs on.
            admitted = calendar.timegm(time.strptime(
                self.wl_condition(wl, "Admitted")["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ"))
            wait_until("20 s after ready's admission", lambda: time.time() > admitted + 20, timeout=30)
            self.assertIsNone(self.wl_condition(self.workload("ready"), "Evicted"))
            self.assertEqual(self.state("ready"), "Running")
        finally:
            KUEUE.stop()
            KUEUE.wait_for_pods_ready = None
            KUEUE.start()

    def test_bad_input_waits_with_kueues_reason_and_the_operator_keeps_serving(self):
        self.queue_setup(gpus=8)
        apply(queued(job("noqueue", Worker=gpu_role(1, 1)), "missing-queue"), self.ns)
        apply(queued(job("toobig", Worker=gpu_role(4, 4)), "lq"), self.ns)
        apply(queued(job("noclass", Worker=gpu_role(1, 1)), "lq", f"missing-{self.id}"), self.ns)
        apply(job("plain", Chief=gpu_role(1, 0, 0, 1)), self.ns)  # not queued: runs as without Kueue
        c = wait_until("noqueue inadmissible", lambda: (self.condition("noqueue", "Queued") or {}).get("reason")
                       == "Inadmissible" and self.condition("noqueue", "Queued"), timeout=30)
        self.assertIn("LocalQueue missing-queue doesn't exist", c["message"])
        self.wait_event("noqueue", "Inadmissible")
        c = wait_until("toobig pending", lambda: (self.condition("toobig", "Queued") or {}).get("reason")
                       == "Pending" and self.condition("toobig", "Queued"), timeout=30)
        self.assertIn("insufficient quota", c["message"])
        c = wait_until("noclass waiting", lambda: self.condition("noclass", "Queued"), timeout=30)
        self.assertEqual(c["reason"], "WorkloadPriorityClassNotFound")
        self.assertIn(f"missing-{self.id}", c["message"])
        self.assertIsNone(self.workload("noclass"))
        self.wait_state("plain", "Succeeded", timeout=30)
        for n in ("noqueue", "toobig", "noclass"):
            self.assertEqual(self.pods(n), [], n)
            self.assertEqual(self.state(n), "Queued", n)
        # The one reason each waits: Kueue's, in the Waiting condition too.
        waiting = wait_until("toobig's Waiting", lambda: (self.condition("toobig", "Waiting") or {}).get(
            "status") == "True" and self.condition("toobig", "Waiting"), timeout=30)
        self.assertEqual(waiting["reason"], "Queued")
        self.assertIn("insufficient quota", waiting["message"])
        # Fixed by their owners, they run: the class appears, the job shrinks (its Workload is
        # replaced since Kueue must admit the new size).
        self.priority_class(f"missing-{self.id}", 10)
        old_uid = self.workload("toobig")["metadata"]["uid"]
        kubectl("patch", "distributedtraining", "toobig", "-n", self.ns, "--type=merge",
                "-p", json.dumps({"spec": {"replicaSpecs": {"Worker": {"replicas": 1}}}}))
        for n in ("noclass", "toobig"):
            self.wait_state(n, "Running", timeout=40)
            wait_until(f"{n}'s Waiting cleared", lambda: self.condition(n, "Waiting")["status"] == "False",
                       timeout=30)
        wl = self.workload("toobig")
        self.assertNotEqual(wl["metadata"]["uid"], old_uid)
        self.assertEqual(wl["spec"]["podSets"][0]["count"], 1)
        self.wait_event("toobig", "DeletedWorkload")

    def test_kueue_down_holds_queued_jobs_only_and_nothing_is_lost(self):
        self.queue_setup(gpus=8)
        KUEUE.stop()
        try:
            apply(queued(job("waiting", Chief=gpu_role(1, 1, 0, 2)), "lq"), self.ns)
            apply(job("free", Chief=gpu_role(1, 0, 0, 1)), self.ns)
            self.wait_state("free", "Succeeded", timeout=30)
            c = wait_until("waiting held", lambda: self.condition("waiting", "Queued"), timeout=30)
            self.assertEqual(c["status"], "True")
            self.assertIn("webhook", c["message"])  # the API server could not reach Kueue's webhook
            self.assertEqual(self.pods("waiting"), [])
        finally:
            KUEUE.start()
        self.wait_state("waiting", "Succeeded", timeout=90)

    def test_the_examples_apply_through_kueues_webhooks_and_the_job_is_admitted(self):
        folder = os.path.join(ROOT, "examples", "kueue")
        with open(os.path.join(folder, "cluster-queue.yaml")) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        with open(os.path.join(folder, "queued-job.yaml")) as f:
            example_job = yaml.safe_load(f)
        with open(os.path.join(folder, "kueue-config-patch.yaml")) as f:
            patch = yaml.safe_load(f)
        self.assertEqual(patch["integrations"]["externalFrameworks"], KUEUE.config()["integrations"]["externalFrameworks"])
        for d in docs:  # cluster-scoped names made unique to this run; the LocalQueue in the test's namespace
            if d["kind"] == "LocalQueue":
                d["metadata"]["namespace"] = self.ns
                d["spec"]["clusterQueue"] += f"-{self.id}"
                apply(d)
                continue
            d["metadata"]["name"] += f"-{self.id}"
            if d["kind"] == "ResourceFlavor":  # this cluster's two GPU kinds are labelled a and b
                d["spec"]["nodeLabels"]["disttrain.io/gpu-kind"] = {"a100": "a", "h100": "b"}[
                    d["spec"]["nodeLabels"]["disttrain.io/gpu-kind"]]
                for t in d["spec"].get("tolerations", []):
                    t["value"] = "b"
            if d["kind"] == "ClusterQueue":
                for fl in d["spec"]["resourceGroups"][0]["flavors"]:
                    fl["name"] += f"-{self.id}"
            self.cluster_object(d)
        example_job["metadata"]["namespace"] = self.ns
        example_job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] += f"-{self.id}"
        for spec in example_job["spec"]["replicaSpecs"].values():  # on kwok: no image runs, a chief that exits
            spec["template"]["metadata"] = {"annotations": {"test.disttrain.io/run-seconds": "3",
                                                            "test.disttrain.io/exit-code": "0"}}
        apply(example_job)
        self.wait_state("mnist-queued", "Succeeded", timeout=60)
        pod = get_json("pod", "mnist-queued-chief-0", "-n", self.ns)  # kept after success
        self.assertEqual(pod["spec"]["nodeSelector"]["disttrain.io/gpu-kind"], "a")
        self.assertEqual(pod["spec"]["nodeName"], FLAVOR_NODES["a"])
        self.assertEqual(self.workload("mnist-queued")["spec"]["priority"], 100)

    def test_a_job_managed_by_another_controller_is_left_alone(self):
        # MultiKueue's manager cluster: Kueue makes no Workload for a kind it does not compile
        # in, so the operator makes it (or MultiKueue never dispatches the job), and no pod:
        # Kueue admits it here (this ClusterQueue has no MultiKueue check, so nothing dispatches
        # it), and the status the operator wrote while it waited is its last.
        self.queue_setup(gpus=2)
        j = job("elsewhere", Chief=gpu_role(1, 0, 0, 1))
        j["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
        apply(queued(j, "lq"), self.ns)
        other = job("other", Chief=gpu_role(1, 0, 0, 1))
        other["spec"]["managedBy"] = "example.com/another"
        apply(queued(other, "lq"), self.ns)
        plain = job("here", Chief=gpu_role(1, 0, 0, 1))
        apply(plain, self.ns)
        self.wait_state("here", "Succeeded", timeout=30)
        wait_until("the MultiKueue job's Workload admitted", lambda: (self.wl_condition(
            self.workload("elsewhere"), "Admitted") or {}).get("status") == "True", timeout=30)
        wl = self.workload("elsewhere")
        self.assertEqual(wl["metadata"]["ownerReferences"][0]["kind"], "DistributedTraining")
        self.assertEqual(wl["metadata"]["ownerReferences"][0]["name"], "elsewhere")
        self.assertEqual({p["name"]: p["count"] for p in wl["spec"]["podSets"]}, {"chief": 1})
        self.wait_event("elsewhere", "CreatedWorkload")
        for name in ("elsewhere", "other"):
            self.assertEqual(self.pods(name), [], name)
        self.assertNotIn("status", self.job("other"))
        self.assertEqual(self.state("elsewhere"), "Queued")
        self.assertEqual(self.condition("elsewhere", "Queued")["reason"], "WaitingForAdmission")
        self.assertIsNone(self.workload("other"))
        r = kubectl("patch", "distributedtraining", "here", "-n", self.ns, "--type=merge",
                    "-p", json.dumps({"spec": {"managedBy": "someone-else"}}), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("spec.managedBy is immutable", r.stderr)


if __name__ == "__main__":
    unittest.main()
