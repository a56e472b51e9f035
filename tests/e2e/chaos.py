"""The chaos schedule of issue #61 on the real node, shared by tests/e2e/chaos_realnode_test.py and
bench/chaos_bench.py: one training job (the trainer image: Fashion-MNIST MLP, asynchronous, a
chief, 2 ps, 2 workers) while, at fixed times after its chief's first step and never before the
previous fault is recovered from,

  ps-sigkill   ps 1's main process gets SIGKILL (containerd kills the task);
  worker-oom   worker 1 is killed by the kernel's OOM killer: a helper process joins its memory
               cgroup and allocates until the cgroup is full, as Chaos Mesh's StressChaos does;
               the worker's oom_score_adj, raised to 1000, makes it the one the kernel kills
               (lowering the helper's instead needs CAP_SYS_RESOURCE, which this machine's root
               lacks); the container ends OOMKilled;
  evict        the job is evicted and admitted again at once: a DistributedTraining by Kueue (its
               Workload deactivated, then activated), a TFJob under the training-operator by its
               runPolicy.suspend, which is what Kueue's tfjob integration sets.

What each fault costs is read from the chief's own log (its step, restore and done events across
every chief pod of the job): steps computed (every step the chief saw, counting again those a
restore rolled back), steps kept (the final global step), goodput = kept / computed, and the
time from each fault to its recovery:

  ps-sigkill   to the chief stepping past the step it restored;
  worker-oom   to worker 1 running again (a new container started after the kill);
  evict        to the chief stepping again after the job was admitted again.

A node lost is not in this schedule: the real node is the only one whose pods train, so losing it
loses the job; bench/lost_node.py measures it on kwok nodes (docs/operations.md)."""
import json
import os
import subprocess
import sys
import time

import realnode
from kube import apply, get_json, kubectl, wait_until
from pod_logs import LogFollower
from realnode_test import trainer_template

# (fault, seconds after the chief's first step at the earliest)
SCHEDULE = (("ps-sigkill", 8), ("worker-oom", 18), ("evict", 28))
# About 45 s undisturbed here (about 550 steps/s): the job outlasts the schedule.
STEPS = 25000
WORKER_MEMORY = "512Mi"

# Run by oom_kill as root on the node: joins the cgroup (argv[1]) and allocates until the kernel
# kills the target (argv[2]), whose oom_score_adj of 1000 makes it the OOM killer's first choice.
_STRESS = r"""
import os, sys, time
cgroup, pid = sys.argv[1], int(sys.argv[2])
with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
    f.write(str(os.getpid()))

def alive():
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False

held, deadline = [], time.monotonic() + 30
while alive() and time.monotonic() < deadline:
    held.append(b"x" * (4 << 20))  # written: its pages are charged to the cgroup now
sys.exit(0 if not alive() else 3)
"""


def memory_cgroup(pid):
    """The cgroup-v1 memory folder (or the v2 unified one) of a process of the node."""
    with open(f"/proc/{pid}/cgroup") as f:
        lines = [l.strip().split(":", 2) for l in f if l.strip()]
    for _, controllers, path in lines:
        if "memory" in controllers.split(","):
            return os.path.join("/sys/fs/cgroup/memory", path.lstrip("/"))
    path = next(p for h, c, p in lines if h == "0" and c == "")
    return os.path.join("/sys/fs/cgroup", path.lstrip("/"))


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def oom_kill(container_id, timeout=60):
    """Has the kernel kill a container's main process for memory (see the module's doc)."""
    pid = realnode.task_pid(container_id)
    cgroup = memory_cgroup(pid)
    with open(f"/proc/{pid}/oom_score_adj", "w") as f:
        f.write("1000")
    r = subprocess.run([sys.executable, "-c", _STRESS, cgroup, str(pid)], capture_output=True, text=True,
                       timeout=timeout)
    # The kernel may kill the helper too: once the worker is dead its memory is freed a moment
    # later, and an allocation in between finds only the helper to kill (seen in dmesg).
    if r.returncode not in (0, -9) or _alive(pid):
        raise AssertionError(f"the OOM kill of pid {pid} in {cgroup} failed ({r.returncode}): {r.stderr[-2000:]}")


def job_template(model_dir, policies):
    """The job's replica templates (a DistributedTraining's replicaSpecs, a TFJob's tfReplicaSpecs);
    policies: each role's restartPolicy."""
    common = ["--model=mlp", "--mode=async", f"--steps={STEPS}", "--learning-rate=0.1", "--batch-size=64",
              "--checkpoint-steps=1000", "--model-dir=/model"]

    def role(r, n, args, resources):
        t = trainer_template(common + args, model_dir)
        t["spec"]["containers"][0]["resources"] = resources
        return {"replicas": n, "restartPolicy": policies[r], "template": t}
    cpu = {"requests": {"cpu": "100m"}}
    return {"Chief": role("Chief", 1, ["--log-every=1"], cpu), "PS": role("PS", 2, ["--log-every=0"], cpu),
            "Worker": role("Worker", 2, ["--log-every=0"], {"requests": {"cpu": "100m", "memory": "128Mi"},
                                                             "limits": {"memory": WORKER_MEMORY}})}


def distributed_training(name, model_dir, queue=None):
    meta = {"name": name}
    if queue:
        meta["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    return {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": meta,
            "spec": {"runPolicy": {"oomPolicy": {"memoryFactor": 2, "maxMemory": "2Gi"}},
                     # The operator recreates a worker (ExitCode) with more memory after an OOM kill;
                     # the kubelet restarts a ps in place (OnFailure), the quickest way back.
                     "replicaSpecs": job_template(model_dir, {"Chief": "ExitCode", "PS": "OnFailure",
                                                              "Worker": "ExitCode"})}}


def tfjob(name, model_dir):
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"},
                     "tfReplicaSpecs": job_template(model_dir, {r: "OnFailure" for r in ("Chief", "PS", "Worker")})}}


class Target:
    """The job under test as the schedule sees it: a DistributedTraining (kind "dtr") or a TFJob."""

    def __init__(self, ns, name, kind):
        self.ns, self.name, self.kind = ns, name, kind
        self.label = "disttrain.io/job-name" if kind == "dtr" else "training.kubeflow.org/job-name"

    def pod(self, pod_name):
        items = get_json("pods", "-n", self.ns, "--field-selector", f"metadata.name={pod_name}")["items"]
        return items[0] if items and not items[0]["metadata"].get("deletionTimestamp") else None

    def pods(self):
        return get_json("pods", "-n", self.ns, "-l", f"{self.label}={self.name}")["items"]

    def outcome(self):
        status = get_json(self.kind, self.name, "-n", self.ns).get("status", {})
        if self.kind == "dtr":
            return status.get("state") if status.get("state") in ("Succeeded", "Failed") else None
        done = {c["type"] for c in status.get("conditions", []) if c["status"] == "True"} & {"Succeeded", "Failed"}
        return next(iter(done), None)

    def evict(self):
        self._suspend(True)

    def admit(self):
        self._suspend(False)

    def _suspend(self, suspended):
        if self.kind == "dtr":
            self._set_workload_active(not suspended)
        else:
            kubectl("patch", "tfjob", self.name, "-n", self.ns, "--type=merge",
                    "-p", json.dumps({"spec": {"runPolicy": {"suspend": suspended}}}))

    def _set_workload_active(self, active):
        wl = next(w["metadata"]["name"] for w in get_json("workloads.kueue.x-k8s.io", "-n", self.ns)["items"]
                  if any(o["name"] == self.name for o in w["metadata"].get("ownerReferences", [])))
        kubectl("patch", "workloads.kueue.x-k8s.io", wl, "-n", self.ns, "--type=merge",
                "-p", json.dumps({"spec": {"active": active}}))


class ChiefLog:
    """The chief's log across its pods and restarts: one `kubectl logs -f` per container run."""

    def __init__(self, target):
        self.target, self.runs, self.seen = target, [], set()

    def poll(self):
        pod = self.target.pod(f"{self.target.name}-chief-0")
        statuses = (pod or {}).get("status", {}).get("containerStatuses", [])
        if not statuses or "running" not in statuses[0].get("state", {}):
            return
        run = (pod["metadata"]["uid"], statuses[0].get("restartCount", 0))
        if run not in self.seen:
            self.seen.add(run)
            self.runs.append(LogFollower(self.target.ns, pod["metadata"]["name"]))

    def events(self):
        return _events_of(self.runs)

    def last_step(self):
        return max((e["global_step"] for e in self.events() if e.get("event") == "step"), default=None)

    def stop(self):
        for follower in self.runs:
            follower.stop()


def goodput(events):
    """(kept, computed): the final global step, and every step the chief saw, rolled back or not."""
    computed = last = 0
    for e in events:
        if e.get("event") == "restore":
            # Steps past the chief's last step event up to the one restored were computed (by
            # the others, or before a checkpoint on SIGTERM) and kept.
            computed += max(0, e["global_step"] - last)
            last = e["global_step"]
        elif e.get("event") == "step" and e["global_step"] > last:
            computed += e["global_step"] - last
            last = e["global_step"]
    kept = max((e["global_step"] for e in events if e.get("event") == "done"), default=last)
    # The chief's last step event may lag the final step (asynchronous pushes of the others).
    return kept, computed + max(0, kept - last)


def run(target, schedule=SCHEDULE, timeout=900):
    """Runs the schedule against a job already applied; returns its figures (a dict). An empty
    schedule runs the job undisturbed, for the wall time to compare with."""
    log = ChiefLog(target)
    figures = {"faults": {}}
    try:
        def step_seen():
            log.poll()
            return log.last_step() is not None
        wait_until("the chief's first step", step_seen, timeout=300, interval=0.2)
        start = time.monotonic()
        for fault, at in schedule:
            while time.monotonic() < start + at:
                log.poll()
                time.sleep(0.2)
            if target.outcome():
                raise AssertionError(f"the job ended before its {fault} fault: give it more steps (STEPS)")
            at_s = round(time.monotonic() - start, 1)
            figures["faults"][fault] = globals()[f"_{fault.replace('-', '_')}"](target, log)
            figures["faults"][fault]["at_s"] = at_s

        def ended():
            log.poll()
            return target.outcome()
        figures["outcome"] = wait_until("the job to end", ended, timeout=timeout, interval=0.5)
        figures["wall_s"] = round(time.monotonic() - start, 1)
        wait_until("the chief's done event", lambda: any(e.get("event") == "done" for e in log.events()),
                   timeout=60)
        events = log.events()
        chief_log = "".join(f.text() for f in log.runs)
    finally:
        log.stop()
    kept, computed = goodput(events)
    figures.update(steps_kept=kept, steps_computed=computed, goodput=round(kept / computed, 4) if computed else None,
                   restores=[e for e in events if e.get("event") == "restore"],
                   chief_log="\n".join(l for l in chief_log.splitlines() if '"event":"step"' not in l))
    return figures


def _chief_stepping_past(log, step, timeout=180):
    def past():
        log.poll()
        s = log.last_step()
        return s is not None and s > step
    wait_until(f"the chief stepping past step {step}", past, timeout=timeout, interval=0.05)
    return time.monotonic()


def _ps_sigkill(target, log):
    ps = target.pod(f"{target.name}-ps-1")
    restores = sum(e.get("event") == "restore" for e in log.events())
    at_kill = log.last_step()
    realnode.kill_container(realnode.container_ids(ps)[0])
    killed = time.monotonic()

    def restored():
        log.poll()
        r = [e for e in log.events() if e.get("event") == "restore"]
        return r[restores] if len(r) > restores else None
    restore = wait_until("the chief's restore of ps 1", restored, timeout=120, interval=0.05)
    resumed = _chief_stepping_past(log, restore["global_step"])
    # The chief's last step before its restore (it may step on a moment after the kill).
    events = log.events()
    cut = [i for i, e in enumerate(events) if e.get("event") == "restore"][restores]
    last = max((e["global_step"] for e in events[:cut] if e.get("event") == "step"), default=at_kill)
    return {"recover_s": round(resumed - killed, 2), "steps_lost": last - restore["global_step"],
            "source": restore.get("source"), "copy_age_s": restore.get("copy_age_seconds")}


def _worker_oom(target, log):
    name = f"{target.name}-worker-1"

    def running():
        p = target.pod(name)
        statuses = (p or {}).get("status", {}).get("containerStatuses", [])
        ids = realnode.running_task_ids()
        return p if statuses and "running" in statuses[0].get("state", {}) and realnode.container_ids(
            p)[0] in ids else None
    worker = wait_until("worker 1 running", running, timeout=120, interval=0.2)
    restarts = worker["status"]["containerStatuses"][0].get("restartCount", 0)
    memory = worker["spec"]["containers"][0]["resources"].get("limits", {}).get("memory")
    oom_kill(realnode.container_ids(worker)[0])
    killed = time.monotonic()

    def back():
        """Worker 1 running again: a new pod, or the same one restarted in place by the kubelet."""
        p = target.pod(name)
        statuses = (p or {}).get("status", {}).get("containerStatuses", [])
        if not statuses or "running" not in statuses[0].get("state", {}):
            return None
        if p["metadata"]["uid"] != worker["metadata"]["uid"] or statuses[0].get("restartCount", 0) > restarts:
            return p
        return None
    again = wait_until("worker 1 running again", back, timeout=120, interval=0.1)
    recovered = time.monotonic()
    return {"recover_s": round(recovered - killed, 2), "memory_before": memory,
            "memory_after": again["spec"]["containers"][0]["resources"].get("limits", {}).get("memory"),
            "recreated": again["metadata"]["uid"] != worker["metadata"]["uid"]}


def _evict(target, log):
    target.evict()
    evicted = time.monotonic()
    wait_until("every pod of the job gone", lambda: not [p for p in target.pods()], timeout=120, interval=0.2)
    gone = time.monotonic()
    runs = len(log.runs)
    # The old chief's last step: its log is whole once its pod is gone.
    before = max((e["global_step"] for e in _events_of(log.runs) if e.get("event") == "step"), default=None)
    target.admit()

    def new_chief_stepping():
        log.poll()
        if len(log.runs) == runs:
            return False
        steps = [e for e in _events_of(log.runs[runs:]) if e.get("event") == "step"]
        return bool(steps)
    wait_until("the chief stepping again after the eviction", new_chief_stepping, timeout=180, interval=0.1)
    resumed = time.monotonic()
    restore = next((e for e in _events_of(log.runs[runs:]) if e.get("event") == "restore"), None)
    return {"recover_s": round(resumed - evicted, 2), "stopped_s": round(gone - evicted, 2),
            # A checkpoint on SIGTERM may be ahead of the chief's last step event: none lost.
            "steps_lost": max(0, before - restore["global_step"]) if restore and before is not None else None}


def _events_of(followers):
    out = []
    for follower in followers:
        for line in follower.text().splitlines():
            line = line.strip()
            if line.startswith("{") and '"event"' in line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return out
