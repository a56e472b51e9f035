"""Helpers for the suites that run real pods on the local cluster's real node (tests/cluster/node):
its status, pod templates that select it, and the containers behind pods (containerd tasks)."""
import json
import os
import subprocess
import sys

from kube import CLUSTER_DIR

STATUS_FILE = os.path.join(CLUSTER_DIR, "real-node")
CONTAINERD_SOCK = os.path.join(CLUSTER_DIR, "node", "containerd", "containerd.sock")
NODE_LABEL = "disttrain.io/real-node"
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for these suites: reported as not run, never as passed
TRAINER_IMAGE = "ghcr.io/disttrain/trainer:0.1.0"
OPERATOR_IMAGE = "ghcr.io/disttrain/operator:0.1.0"
TF_EXAMPLE_IMAGE = "ghcr.io/disttrain/tf-example:0.1.0"


def status():
    try:
        with open(STATUS_FILE) as f:
            return f.read().strip()
    except FileNotFoundError:
        return "unavailable: the cluster was started without a real node"


def exit_unless_up():
    """Ends the suite when there is no real node: SKIPPED (not run) where this machine cannot run
    one, a failure where it could but the node did not start."""
    s = status()
    if s.startswith("unavailable"):
        print(f"real-node suite NOT RUN: {s}", file=sys.stderr)
        sys.exit(SKIPPED)
    if s != "up":
        print(f"real-node suite FAILED: the real node is not up: {s}", file=sys.stderr)
        sys.exit(1)


def on_real_node(pod_spec):
    """Makes a pod spec select the real node (and tolerate its taint)."""
    pod_spec.setdefault("nodeSelector", {})[NODE_LABEL] = "true"
    pod_spec.setdefault("tolerations", []).append({"key": NODE_LABEL, "operator": "Exists", "effect": "NoSchedule"})
    return pod_spec


def running_task_ids():
    """IDs of the containers whose processes run now (containerd tasks in the k8s.io namespace)."""
    out = subprocess.run(["ctr", "--address", CONTAINERD_SOCK, "-n", "k8s.io", "tasks", "ls"],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines()[1:] if line.split() and line.split()[-1] == "RUNNING"}


def task_pid(container_id):
    """The node's pid of a container's main process (its containerd task)."""
    out = subprocess.run(["ctr", "--address", CONTAINERD_SOCK, "-n", "k8s.io", "tasks", "ls"],
                         capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[1]) for line in out.splitlines()[1:] if line.split()[:1] == [container_id])


def container_ids(pod):
    """containerd IDs of a pod's containers (from its status)."""
    return [c["containerID"].split("://", 1)[1] for c in pod.get("status", {}).get("containerStatuses", [])
            if c.get("containerID")]


def kill_container(container_id, signal="SIGKILL"):
    """kill -9 of a container's main process, as the node's runtime sees it."""
    subprocess.run(["ctr", "--address", CONTAINERD_SOCK, "-n", "k8s.io", "tasks", "kill", "-s", signal,
                    container_id], check=True, capture_output=True, text=True)


def events_in(log_text, kind):
    """The trainer's JSON event lines of one kind in a log."""
    out = []
    for line in log_text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                j = json.loads(line)
            except json.JSONDecodeError:
                continue
            if j.get("event") == kind:
                out.append(j)
    return out
