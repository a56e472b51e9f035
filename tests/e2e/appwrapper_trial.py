"""One-off trial of Kueue's wrapper route (issue #34): an AppWrapper around a DistributedTraining,
queued by Kueue's built-in AppWrapper integration, unwrapped by AppWrapper's own controller, run
by the operator WITHOUT --kueue. Not a test and not part of `make test`: it prints a timeline of
what it saw (docs/notes/kueue.md records one run).

    make tools kueue cluster-up && tests/cluster/tools/build-appwrapper.sh
    python3 tests/e2e/appwrapper_trial.py [scenario ...]     # default: all of them

Scenarios (each in a namespace of its own):
  full      chief + ps + 2 GPU workers, a podSet for each role, defaults otherwise
  nops      the same job, podSets for chief and workers only (the ps outside Kueue's quota)
  held      a ClusterQueue with 1 GPU for a job that needs 2: held; then the AppWrapper deleted
  delete    a running AppWrapper deleted
  keep      as full, with cleanPodPolicy None (the ps outlives the chief)
  late      as nops, with workers still running when the chief succeeds (retryLimit 0)
  evict     the admitted AppWrapper's Workload deactivated, then activated again

It starts and stops everything it needs (Kueue, AppWrapper's controller, the operator) and
removes what it made (the namespaces, the cluster objects, AppWrapper's CRD and webhook
configurations).
"""
import json
import os
import signal
import subprocess
import sys
import time

import yaml

from crd_test import install_crd
from kube import KUBECONFIG, ROOT, Namespace, apply, get_json, kubectl, wait_until
from kueue_process import LOG_DIR, Kueue, free_port
from lifecycle_test import role
from operator_process import OperatorProcess

GPU = "nvidia.com/gpu"
AW_DIR = os.environ.get("DISTTRAIN_APPWRAPPER_DIR") or subprocess.run(
    [os.path.join(ROOT, "tests/cluster/tools/build-appwrapper.sh")], check=True, capture_output=True,
    text=True).stdout.strip()
AW_NS = "appwrapper-trial-system"
NODE = "aw-trial-gpu-0"
FRAMEWORK = "workload.codeflare.dev/appwrapper"


class AppWrapperController:
    """AppWrapper's controller out of cluster: its configuration from a ConfigMap in AW_NS
    (webhooks and their certificate rotation off, metrics off, no leader election)."""

    def __init__(self):
        self.health_port = free_port()
        self.log_path = os.path.join(LOG_DIR, "appwrapper-controller.log")
        self.proc = None

    def start(self):
        kubectl("create", "namespace", AW_NS, check=False)
        cfg = {"controllerManager": {"health": {"bindAddress": f"127.0.0.1:{self.health_port}"},
                                     "metrics": {"bindAddress": "0"}, "leaderElection": False},
               "webhooksEnabled": False}
        apply({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "appwrapper-operator-config", "namespace": AW_NS},
               "data": {"config.yaml": yaml.safe_dump(cfg)}})
        self.log = open(self.log_path, "a")
        self.offset = self.log.tell()
        self.proc = subprocess.Popen(
            [os.path.join(AW_DIR, "appwrapper"), f"--kubeconfig={KUBECONFIG}", "--zap-log-level=info"],
            env={**os.environ, "NAMESPACE": AW_NS}, stdout=self.log, stderr=subprocess.STDOUT)

        # Its /readyz is not asked: with webhooks off, the check itself calls GetWebhookServer(),
        # which adds a webhook server to the running manager, which then looks for certificates.
        def started():
            if self.proc.poll() is not None:
                raise AssertionError(f"appwrapper exited {self.proc.returncode}: {self.read_log()[-3000:]}")
            return "Starting workers" in self.read_log()
        wait_until("AppWrapper's controller to start its workers", started, timeout=60)
        return self

    def read_log(self):
        with open(self.log_path) as f:
            f.seek(self.offset)
            return f.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None


def install_appwrapper_crd():
    for f in sorted(os.listdir(os.path.join(AW_DIR, "crd"))):
        kubectl("apply", "--server-side", "--force-conflicts", "-f", os.path.join(AW_DIR, "crd", f))
    kubectl("wait", "--for=condition=Established", "crd/appwrappers.workload.codeflare.dev", "--timeout=60s")


def gpu_role(replicas, gpus, exit_code=None, run_seconds=None):
    spec = role(replicas, exit_code, run_seconds)
    c = spec["template"]["spec"]["containers"][0]
    c["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    if gpus:
        c["resources"]["requests"][GPU] = str(gpus)
        c["resources"]["limits"] = {GPU: str(gpus)}
    return spec


def training(name, chief_seconds=20, worker_seconds=8, clean_pod_policy=None):
    """Chief + ps + 2 one-GPU workers; on kwok the workers exit 0 first, then the chief."""
    j = {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": name},
         "spec": {"replicaSpecs": {
             "Chief": gpu_role(1, 0, 0, chief_seconds),
             "PS": gpu_role(1, 0),
             "Worker": gpu_role(2, 1, 0, worker_seconds)}}}
    if clean_pod_policy:
        j["spec"]["runPolicy"] = {"cleanPodPolicy": clean_pod_policy}
    return j


def appwrapper(name, queue, with_ps=True, annotations=None, **kw):
    pod_sets = [{"replicas": 1, "path": "template.spec.replicaSpecs.Chief.template"}]
    if with_ps:
        pod_sets.append({"replicas": 1, "path": "template.spec.replicaSpecs.PS.template"})
    pod_sets.append({"replicas": 2, "path": "template.spec.replicaSpecs.Worker.template"})
    return {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue},
                         "annotations": annotations or {}},
            "spec": {"components": [{"podSets": pod_sets, "template": training(name, **kw)}]}}


def queue_objects(tag, gpus):
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": f"aw-{tag}"},
         "spec": {"nodeLabels": {"disttrain.io/gpu-kind": "aw"}}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": f"aw-{tag}"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{
             "coveredResources": ["cpu", "memory", GPU],
             "flavors": [{"name": f"aw-{tag}", "resources": [
                 {"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"},
                 {"name": GPU, "nominalQuota": str(gpus)}]}]}]}},
    ]


# --- observation -----------------------------------------------------------------------------------
def snapshot(ns):
    items = get_json("appwrappers,workloads,distributedtrainings,pods", "-n", ns)["items"]
    out = {}
    for o in items:
        kind, name = o["kind"], o["metadata"]["name"]
        st = o.get("status", {})
        conds = lambda c: ",".join(f"{x['type']}={x['status']}({x.get('reason', '')})" for x in c or [])
        if kind == "AppWrapper":
            out[f"aw/{name}"] = (f"suspend={o['spec'].get('suspend')} phase={st.get('phase')} "
                                 f"retries={st.get('resettingCount', 0)} {conds(st.get('conditions'))}")
        elif kind == "Workload":
            ps = " ".join(f"{p['name']}x{p['count']}" for p in o["spec"]["podSets"])
            out[f"wl/{name}"] = f"[{ps}] {conds(st.get('conditions'))}"
        elif kind == "DistributedTraining":
            out[f"dt/{name}"] = f"state={st.get('state')}"
        elif kind == "Pod":
            gone = " deleting" if o["metadata"].get("deletionTimestamp") else ""
            out[f"pod/{name}"] = f"{st.get('phase')}{gone}"
    return out


class Timeline:
    def __init__(self, ns):
        self.ns, self.t0, self.last = ns, time.monotonic(), {}

    def poll(self):
        now = snapshot(self.ns)
        t = time.monotonic() - self.t0
        for k in sorted(set(now) | set(self.last)):
            if now.get(k) != self.last.get(k):
                print(f"  [{t:6.1f}s] {k}: {now.get(k, '(gone)')}", flush=True)
        self.last = now
        return now

    def until(self, what, pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.poll()
            if pred(now):
                print(f"  [{time.monotonic() - self.t0:6.1f}s] -> {what}", flush=True)
                return True
            time.sleep(0.5)
        print(f"  [{time.monotonic() - self.t0:6.1f}s] -> NOT within {timeout} s: {what}", flush=True)
        return False


def aw_phase(now, name):
    v = now.get(f"aw/{name}", "")
    return v.split("phase=")[1].split()[0] if "phase=" in v else None


def show(ns, *what):
    for w in what:
        print(f"  --- kubectl get {w} -n {ns} -o yaml")
        print("    " + kubectl("get", *w.split(), "-n", ns, "-o", "yaml").stdout.replace("\n", "\n    "))


def pods_detail(ns):
    for p in get_json("pods", "-n", ns)["items"]:
        m, s = p["metadata"], p["spec"]
        labels = {k: v for k, v in m.get("labels", {}).items() if "kueue" in k or "codeflare" in k}
        print(f"    {m['name']}: node={s.get('nodeName')} nodeSelector={s.get('nodeSelector')} labels={labels} "
              f"affinity={json.dumps(s.get('affinity'))}")


# --- scenarios -------------------------------------------------------------------------------------
def local_queue(ns, cq):
    apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "gpu"},
           "spec": {"clusterQueue": cq}}, ns)


def scenario_full(ns, with_ps=True, observe=300):
    local_queue(ns, "aw-main")
    tl = Timeline(ns)
    apply(appwrapper("train", "gpu", with_ps=with_ps), ns)
    tl.until("a Workload", lambda n: any(k.startswith("wl/") for k in n), 30)
    tl.until("pods of the DistributedTraining", lambda n: any(k.startswith("pod/") for k in n), 60)
    tl.until("all 4 (or 4 less the ps) pods Running", lambda n: sum(
        1 for k, v in n.items() if k.startswith("pod/") and v == "Running") >= (4 if with_ps else 3), 60)
    show(ns, "workloads")
    pods_detail(ns)
    print("  --- the DistributedTraining as created by AppWrapper's controller (metadata, ownerReferences)")
    dt = get_json("distributedtraining", "train", "-n", ns)
    print("    labels", dt["metadata"].get("labels"), "owners", dt["metadata"].get("ownerReferences"))
    tl.until("the DistributedTraining Succeeded", lambda n: n.get("dt/train") == "state=Succeeded", 90)
    final = lambda n: aw_phase(n, "train") in ("Succeeded", "Failed")
    done = tl.until("the AppWrapper Succeeded or Failed, or reset once and the job running again", lambda n: final(n) or (
        "retries=1" in n.get("aw/train", "") and n.get("dt/train") == "state=Running"), observe)
    if done and not final(tl.last):
        # Its default retryLimit (3) would run the job 3 more times, ~150 s a round: cut it short.
        print("  --- kubectl annotate appwrapper train workload.codeflare.dev.appwrapper/retryLimit=0")
        kubectl("annotate", "appwrapper", "train", "-n", ns, "workload.codeflare.dev.appwrapper/retryLimit=0")
        done = tl.until("the AppWrapper Succeeded or Failed", final, 240)
    show(ns, "appwrapper train", "workloads")
    print("  --- events")
    print("    " + kubectl("get", "events", "-n", ns, "--sort-by=.lastTimestamp").stdout.replace("\n", "\n    "))
    return done


def scenario_held(ns):
    local_queue(ns, "aw-small")
    tl = Timeline(ns)
    apply(appwrapper("big", "gpu"), ns)
    tl.until("a Workload", lambda n: any(k.startswith("wl/") for k in n), 30)
    time.sleep(10)
    tl.poll()
    show(ns, "workloads", "appwrapper big")
    print("    distributedtrainings:", kubectl("get", "distributedtrainings", "-n", ns).stdout.strip() or "none",
          "| pods:", kubectl("get", "pods", "-n", ns).stdout.strip() or "none")
    kubectl("delete", "appwrapper", "big", "-n", ns, "--wait=false")
    tl.until("the AppWrapper and its Workload gone",
             lambda n: not any(k.startswith(("aw/", "wl/")) for k in n), 60)


def scenario_delete(ns):
    local_queue(ns, "aw-main")
    tl = Timeline(ns)
    apply(appwrapper("gone", "gpu", chief_seconds=600, worker_seconds=600), ns)
    tl.until("all 4 pods Running", lambda n: sum(
        1 for k, v in n.items() if k.startswith("pod/") and v == "Running") >= 4, 90)
    kubectl("delete", "appwrapper", "gone", "-n", ns, "--wait=false")
    tl.until("AppWrapper, Workload, DistributedTraining and pods gone", lambda n: not n, 120)


def scenario_keep_pods(ns):
    """cleanPodPolicy None: the ps outlives the chief, as the job's own spec allows."""
    local_queue(ns, "aw-main")
    tl = Timeline(ns)
    apply(appwrapper("keep", "gpu", clean_pod_policy="None"), ns)
    tl.until("the DistributedTraining Succeeded", lambda n: n.get("dt/keep") == "state=Succeeded", 90)
    tl.until("the AppWrapper Succeeded or Failed", lambda n: aw_phase(n, "keep") in ("Succeeded", "Failed"), 100)


def scenario_late_workers(ns):
    """No ps podSet, but workers still running when the chief succeeds (cleanPodPolicy deletes
    them); retryLimit 0 so that the verdict comes at the first check."""
    local_queue(ns, "aw-main")
    tl = Timeline(ns)
    apply(appwrapper("late", "gpu", with_ps=False, worker_seconds=600, chief_seconds=10,
                     annotations={"workload.codeflare.dev.appwrapper/retryLimit": "0"}), ns)
    tl.until("the DistributedTraining Succeeded", lambda n: n.get("dt/late") == "state=Succeeded", 90)
    tl.until("the AppWrapper Succeeded or Failed", lambda n: aw_phase(n, "late") in ("Succeeded", "Failed"), 120)


def scenario_evict(ns):
    """Kueue evicts the admitted AppWrapper (its Workload deactivated, as an admin or a
    preemption would), then lets it in again."""
    local_queue(ns, "aw-main")
    tl = Timeline(ns)
    apply(appwrapper("ev", "gpu", chief_seconds=600, worker_seconds=600), ns)
    tl.until("all 4 pods Running", lambda n: sum(
        1 for k, v in n.items() if k.startswith("pod/") and v == "Running") >= 4, 90)
    wl = [k[3:] for k in tl.last if k.startswith("wl/")][0]
    uid = get_json("distributedtraining", "ev", "-n", ns)["metadata"]["uid"]
    print(f"  --- kubectl patch workload {wl} spec.active=false (DistributedTraining uid {uid})")
    kubectl("patch", "workload", wl, "-n", ns, "--type=merge", "-p", '{"spec":{"active":false}}')
    tl.until("no DistributedTraining, AppWrapper Suspended",
             lambda n: "dt/ev" not in n and aw_phase(n, "ev") == "Suspended", 90)
    print(f"  --- kubectl patch workload {wl} spec.active=true")
    kubectl("patch", "workload", wl, "-n", ns, "--type=merge", "-p", '{"spec":{"active":true}}')
    tl.until("all 4 pods Running again", lambda n: sum(
        1 for k, v in n.items() if k.startswith("pod/") and v == "Running") >= 4, 90)
    uid2 = get_json("distributedtraining", "ev", "-n", ns)["metadata"]["uid"]
    print(f"  --- DistributedTraining uid now {uid2} ({'a new object' if uid2 != uid else 'the same object'})")


SCENARIOS = {"keep": scenario_keep_pods, "late": scenario_late_workers, "evict": scenario_evict,
             "full": scenario_full, "nops": lambda ns: scenario_full(ns, with_ps=False),
             "held": scenario_held, "delete": scenario_delete}


def main(names):
    started = time.time()
    install_crd()
    install_appwrapper_crd()
    kueue = Kueue("kueue-appwrapper", extra_frameworks=[FRAMEWORK]).install()
    cluster_objects = []
    aw = operator = None
    try:
        kueue.start()
        aw = AppWrapperController().start()
        operator = OperatorProcess("appwrapper-operator", "--workers", "4").start()
        apply({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": NODE, "annotations": {"kwok.x-k8s.io/node": "fake"},
                            "labels": {"kubernetes.io/hostname": NODE, "type": "kwok-aw",
                                       "disttrain.io/gpu-kind": "aw"}},
               "spec": {}, "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110", GPU: "8"},
                                      "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110", GPU: "8"}}})
        cluster_objects.append(("node", NODE))
        kubectl("wait", "--for=condition=Ready", f"node/{NODE}", "--timeout=60s")
        for tag, gpus in (("main", 8), ("small", 1)):
            objs = queue_objects(tag, gpus)
            if tag == "small":
                objs = objs[1:]
                objs[0]["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "aw-main"
            for o in objs:
                apply(o)
                cluster_objects.append((o["kind"].lower(), o["metadata"]["name"]))
        print(f"set-up done in {time.time() - started:.1f} s", flush=True)
        for name in names:
            print(f"\n=== scenario {name}", flush=True)
            ctx = Namespace(f"aw-{name}")
            ns = ctx.__enter__()
            try:
                SCENARIOS[name](ns)
            except Exception as e:  # one scenario's surprise must not hide the others'
                print(f"  !!! scenario {name} raised: {e!r}", flush=True)
            finally:
                kubectl("delete", "appwrappers", "--all", "-n", ns, "--wait=false", check=False)
                ctx.__exit__(None, None, None)
                gone = lambda: kubectl("get", "namespace", ns, check=False).returncode != 0
                try:
                    wait_until(f"namespace {ns} to be gone", gone, timeout=120)
                except AssertionError:
                    print(f"  !!! namespace {ns} still there:", kubectl("get", "all,workloads,appwrappers", "-n", ns,
                                                                         check=False).stdout)
    finally:
        for kind, name in reversed(cluster_objects):
            kubectl("delete", kind, name, "--ignore-not-found", check=False, timeout=120)
        if operator:
            print("operator exit", operator.stop())
        if aw:
            print("appwrapper exit", aw.stop())
        kueue.stop()
        kueue.uninstall()
        kubectl("delete", "namespace", AW_NS, "--ignore-not-found", "--wait=false", check=False)
        kubectl("delete", "crd", "appwrappers.workload.codeflare.dev", "--ignore-not-found", check=False,
                timeout=120)
        print(f"total {time.time() - started:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:] or list(SCENARIOS))
