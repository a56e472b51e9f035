"""What Kueue support costs and how fast it acts, on the local cluster with the real Kueue
(tests/e2e/kueue_process.py): N jobs of 7 pods, queued through a ClusterQueue they all fit in,
against the same N jobs without Kueue (operator without --kueue, no queue label), alternating,
RUNS of each; then E long-running queued jobs evicted at once (their Workloads deactivated).

Reports medians over the runs:
- admission to pods: per job, from the watch event that shows its Workload Admitted to the last
  of its 7 pods' ADDED event (p50/p99);
- eviction to gone: per job, from the event that shows its Workload Evicted to its last pod's
  DELETED event (p50/p99);
- API writes per job (POST/PATCH/PUT/DELETE from the operator's rest_client_requests_total) with
  and without Kueue, and their difference;
- reconcile passes per job (controller_runtime_reconcile_total), with and without Kueue;
- the operator's CPU seconds and peak RSS per job, with and without Kueue;
- what the rest of the machine spent meanwhile, per job: Kueue's CPU and the API server's and
  etcd's, with and without Kueue (Kueue runs in both: the plain run's jobs carry no queue label).

KUEUE_BENCH_BURN=F (0 < F <= 1) runs a busy loop on F of one core during the runs without Kueue,
to see how much of the operator's CPU per job depends on how busy the two cores are
(docs/notes/kueue.md).

Usage: python3 bench/kueue_bench.py [JOBS] [RUNS] [EVICTED]   (defaults 100 3 20)
Prints one JSON line per run and a summary line.
"""
import json
import multiprocessing
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from crd_test import install_crd  # noqa: E402
from kube import Namespace, apply, get_json, kubectl, wait_until  # noqa: E402
from kueue_process import Kueue  # noqa: E402
from operator_process import OperatorProcess  # noqa: E402
from scale_harness import PodWatcher, job_manifest, percentile, proc_usage, server_cpu  # noqa: E402

WRITES = ("POST", "PATCH", "PUT", "DELETE")
# The bench's Kueue leaves waitForPodsReady off, as Kueue's default configuration does, so the
# operator leaves PodsReady unwritten as Kueue's own job controllers then do
# (KUEUE_BENCH_PODS_READY=1 writes it, as the operator's default does).
KUEUE_FLAGS = ["--kueue", f"--kueue-pods-ready={'true' if os.environ.get('KUEUE_BENCH_PODS_READY') == '1' else 'false'}"]


class WorkloadWatcher(PodWatcher):
    """When this process saw each Workload admitted, and evicted."""

    def __init__(self, ns):
        self.admitted, self.evicted = {}, {}
        super().__init__(ns, collection="/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads")

    def observe(self, kind, wl, now):
        job = wl["metadata"].get("labels", {}).get("disttrain.io/job-name", "")
        for c in wl.get("status", {}).get("conditions", []):
            if c["type"] == "Admitted" and c["status"] == "True":
                self.admitted.setdefault(job, now)
            if c["type"] == "Evicted" and c["status"] == "True":
                self.evicted.setdefault(job, now)


def burn(fraction):
    """Keeps `fraction` of one core busy (10 ms periods) until killed."""
    while True:
        end = time.monotonic() + 0.01 * fraction
        while time.monotonic() < end:
            pass
        time.sleep(0.01 * (1 - fraction))


def writes(operator):
    total = 0
    for m in re.finditer(r'rest_client_requests_total\{code="[^"]*",method="([A-Z]+)"\} (\d+)', operator.metrics()):
        if m.group(1) in WRITES:
            total += int(m.group(2))
    return total


def passes(operator):
    """Reconcile passes of DistributedTrainings so far (every result)."""
    return sum(int(m.group(1)) for m in re.finditer(
        r'controller_runtime_reconcile_total\{controller="distributedtraining",result="[^"]*"\} (\d+)', operator.metrics()))


def queue_objects(tag):
    rf, cq = f"bench-{tag}", f"bench-{tag}"
    apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": rf}, "spec": {}})
    apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cq},
           "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
               {"name": rf, "resources": [{"name": "cpu", "nominalQuota": "1000"}]}]}]}})
    return rf, cq


def delete_namespace(ns):
    """Deletes the run's namespace and waits for it while its operator still runs: Kueue's
    finalizer on the Workloads is the operator's to remove."""
    kubectl("delete", "namespace", ns, "--wait=false", check=False)
    wait_until(f"namespace {ns} to be gone", lambda: kubectl(
        "get", "namespace", ns, check=False).returncode != 0, timeout=300)


def run(jobs, kueue, tag, kueue_pid, chief_seconds=15):
    install_crd()
    burn_fraction = float(os.environ.get("KUEUE_BENCH_BURN", "0")) if not kueue else 0
    burner = None
    with Namespace("kbench") as ns:
        # --namespace: the jobs of earlier runs' namespaces, still being deleted, are not this run's.
        operator = OperatorProcess(f"kbench-{tag}", "--workers", "8", "--namespace", ns,
                                   *(KUEUE_FLAGS if kueue else [])).start()
        cq = None
        if kueue:
            _, cq = queue_objects(tag)
            apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
                   "spec": {"clusterQueue": cq}}, ns)
        pods = PodWatcher(ns)
        wls = WorkloadWatcher(ns) if kueue else None
        try:
            if burn_fraction > 0:
                burner = multiprocessing.Process(target=burn, args=(min(burn_fraction, 1.0),), daemon=True)
                burner.start()
            cpu0, _ = proc_usage(operator.proc.pid)
            kueue_cpu0, server_cpu0 = proc_usage(kueue_pid)[0], server_cpu()
            w0, n0 = writes(operator), passes(operator)
            items = [job_manifest(f"job-{i:03d}", chief_seconds + i * 0.3) for i in range(jobs)]
            for j in items:  # the simulated evaluator never exits: deleted with the others at once
                j["spec"]["runPolicy"] = {"finalEvaluationGracePeriodSeconds": 0}
            if kueue:
                for j in items:
                    j["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
            start = time.monotonic()
            kubectl("apply", "-f", "-", "-n", ns, timeout=600,
                    input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            wait_until("every pod created", lambda: len(pods.added) >= 7 * jobs, timeout=300)
            created_s = max(pods.added.values()) - start
            wait_until(f"all {jobs} jobs to succeed", lambda: [j.get("status", {}).get("state") for j in get_json(
                "dtr", "-n", ns)["items"]].count("Succeeded") == jobs, timeout=300)
            if kueue:  # the last write: Finished (and the finalizer) once the pods are gone
                wait_until("every Workload finished and released", lambda: all(
                    any(c["type"] == "Finished" and c["status"] == "True" for c in w.get("status", {}).get("conditions", []))
                    and not w["metadata"].get("finalizers")
                    for w in get_json("workloads.kueue.x-k8s.io", "-n", ns)["items"]), timeout=120)
            else:  # the same end: only the chiefs' pods are left
                wait_until("every pod but the chiefs gone", lambda: not get_json(
                    "pods", "-n", ns, "-l", "disttrain.io/replica-type!=chief")["items"], timeout=120)
            time.sleep(1)  # the last passes' writes land in the counter
            cpu1, rss = proc_usage(operator.proc.pid)
            kueue_cpu1, server_cpu1 = proc_usage(kueue_pid)[0], server_cpu()
            w1, n1 = writes(operator), passes(operator)
            result = {"kueue": kueue, "jobs": jobs, "create_all_pods_s": round(created_s, 2),
                      "writes_per_job": round((w1 - w0) / jobs, 2),
                      "passes_per_job": round((n1 - n0) / jobs, 2),
                      "operator_cpu_ms_per_job": round((cpu1 - cpu0) * 1000 / jobs, 1),
                      "operator_peak_rss_mb": round(rss, 1),
                      "kueue_cpu_ms_per_job": round((kueue_cpu1 - kueue_cpu0) * 1000 / jobs, 1),
                      "apiserver_etcd_cpu_ms_per_job": round((server_cpu1 - server_cpu0) * 1000 / jobs, 1)}
            if burner:
                result["burn"] = burn_fraction
            if kueue:
                lat = []
                for i in range(jobs):
                    name = f"job-{i:03d}"
                    last = max(t for p, t in pods.added.items() if p.startswith(name + "-"))
                    lat.append((last - wls.admitted[name]) * 1000)
                result["admission_to_pods_ms_p50"] = round(percentile(lat, 50), 1)
                result["admission_to_pods_ms_p99"] = round(percentile(lat, 99), 1)
        finally:
            if burner:
                burner.kill()
            pods.stop()
            if wls:
                wls.stop()
            delete_namespace(ns)
            operator.stop()
            if cq:
                kubectl("delete", "clusterqueue", cq, "--wait=false", check=False)
                kubectl("delete", "resourceflavor", f"bench-{tag}", "--wait=false", check=False)
    return result


def evict(n, tag):
    """n queued jobs running for good; their Workloads deactivated at once."""
    with Namespace("kevict") as ns:
        operator = OperatorProcess(f"kevict-{tag}", "--workers", "8", "--namespace", ns, *KUEUE_FLAGS).start()
        rf, cq = queue_objects(tag)
        apply({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq"},
               "spec": {"clusterQueue": cq}}, ns)
        pods, wls = PodWatcher(ns), WorkloadWatcher(ns)
        try:
            items = [job_manifest(f"ev-{i:03d}", 3600) for i in range(n)]
            for j in items:
                j["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
            kubectl("apply", "-f", "-", "-n", ns, input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            wait_until("every job running", lambda: [j.get("status", {}).get("state") for j in get_json(
                "dtr", "-n", ns)["items"]].count("Running") == n, timeout=300)
            for w in get_json("workloads.kueue.x-k8s.io", "-n", ns)["items"]:
                kubectl("patch", "workloads.kueue.x-k8s.io", w["metadata"]["name"], "-n", ns, "--type=merge",
                        "-p", '{"spec":{"active":false}}')
            wait_until("every pod gone", lambda: len(pods.deleted) >= 7 * n, timeout=300)
            lat = []
            for i in range(n):
                name = f"ev-{i:03d}"
                gone = max(t for p, t in pods.deleted.items() if p.startswith(name + "-"))
                lat.append((gone - wls.evicted[name]) * 1000)
        finally:
            pods.stop()
            wls.stop()
            delete_namespace(ns)
            operator.stop()
            kubectl("delete", "clusterqueue", cq, "--wait=false", check=False)
            kubectl("delete", "resourceflavor", rf, "--wait=false", check=False)
    return {"evicted_jobs": n, "eviction_to_gone_ms_p50": round(percentile(lat, 50), 1),
            "eviction_to_gone_ms_p99": round(percentile(lat, 99), 1)}


def main():
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    evicted = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    kueue = Kueue("kueue-bench").install().start()
    results = {True: [], False: []}
    try:
        for r in range(runs):
            for with_kueue in (False, True):
                res = run(jobs, with_kueue, f"{r}{int(with_kueue)}-{os.getpid()}", kueue.proc.pid)
                print(json.dumps(res), flush=True)
                results[with_kueue].append(res)
        ev = [evict(evicted, f"ev{r}-{os.getpid()}") for r in range(runs)]
        for e in ev:
            print(json.dumps(e), flush=True)
    finally:
        kueue.stop()
        kueue.uninstall()
    med = lambda rs, k: statistics.median(x[k] for x in rs)
    k, p = results[True], results[False]
    print(json.dumps({
        "summary": f"median of {runs} runs, {jobs} jobs x 7 pods",
        "admission_to_pods_ms_p50": med(k, "admission_to_pods_ms_p50"),
        "admission_to_pods_ms_p99": med(k, "admission_to_pods_ms_p99"),
        "eviction_to_gone_ms_p50": statistics.median(e["eviction_to_gone_ms_p50"] for e in ev),
        "eviction_to_gone_ms_p99": statistics.median(e["eviction_to_gone_ms_p99"] for e in ev),
        "writes_per_job_kueue": med(k, "writes_per_job"), "writes_per_job_plain": med(p, "writes_per_job"),
        "passes_per_job_kueue": med(k, "passes_per_job"), "passes_per_job_plain": med(p, "passes_per_job"),
        "extra_writes_per_job": round(med(k, "writes_per_job") - med(p, "writes_per_job"), 2),
        "cpu_ms_per_job_kueue": med(k, "operator_cpu_ms_per_job"), "cpu_ms_per_job_plain": med(p, "operator_cpu_ms_per_job"),
        "cpu_ratio": round(med(k, "operator_cpu_ms_per_job") / med(p, "operator_cpu_ms_per_job"), 3),
        "kueue_cpu_ms_per_job_kueue": med(k, "kueue_cpu_ms_per_job"), "kueue_cpu_ms_per_job_plain": med(p, "kueue_cpu_ms_per_job"),
        "apiserver_etcd_cpu_ms_per_job_kueue": med(k, "apiserver_etcd_cpu_ms_per_job"),
        "apiserver_etcd_cpu_ms_per_job_plain": med(p, "apiserver_etcd_cpu_ms_per_job"),
        "rss_mb_kueue": med(k, "operator_peak_rss_mb"), "rss_mb_plain": med(p, "operator_peak_rss_mb"),
        "rss_ratio": round(med(k, "operator_peak_rss_mb") / med(p, "operator_peak_rss_mb"), 3),
        "create_all_pods_s_kueue": med(k, "create_all_pods_s"), "create_all_pods_s_plain": med(p, "create_all_pods_s"),
    }))


if __name__ == "__main__":
    main()
