#!/usr/bin/env python3
"""Captures the fixtures of pod_projection_proto_test: pods and a Service in the states the
operator reads (running with labels and an owner, succeeded with a termination message,
restarted in place, failed, marked for deletion, unschedulable, evicted by the taint manager from
a lost node, a container that cannot pull its image), each fetched from a real
kube-apiserver twice at the same resourceVersion, as JSON (NAME.json) and as protobuf (NAME.pb,
the body as sent, envelope included); plus the list of those pods and a watch from
resourceVersion 0 in protobuf (pods.list.pb, pods.watch.pb).

    make cluster-up
    python3 tests/unit/operator/controller/testdata/capture_pods.py [NAME ...]

With NAMEs, only those fixtures are written (the list and watch fixtures only without NAMEs).
"""
import json
import os
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../../e2e"))
from kube import apply, get_json, https_client, kubectl, wait_until  # noqa: E402

NS = "proto-fixtures"
PROTOBUF = "application/vnd.kubernetes.protobuf"




SERVER, CTX = https_client()


def fetch(path, accept):
    req = urllib.request.Request(SERVER + path, headers={"Accept": accept})
    with urllib.request.urlopen(req, context=CTX, timeout=30) as r:
        content_type = r.headers["Content-Type"]
        if not content_type.startswith(accept):
            raise AssertionError(f"{path}: asked for {accept}, got {content_type}")
        return r.read()


def pod(name, annotations=None, restart="Never", node_selector=None, extra_meta=None):
    meta = {"name": name, "labels": {"app.kubernetes.io/managed-by": "disttrain-operator",
                                      "disttrain.io/replica-type": "worker",
                                      "disttrain.io/replica-index": "0"},
            "annotations": annotations or {}}
    meta.update(extra_meta or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"restartPolicy": restart,
                     "nodeSelector": node_selector or {"type": "kwok"},
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "tensorflow", "image": "registry.example/trainer:1",
                                     "env": [{"name": "TF_CONFIG", "value": "{\"cluster\":{}}"}]},
                                    {"name": "sidecar", "image": "registry.example/sidecar:1"}]}}


def phase(name):
    return get_json("pod", name, "-n", NS).get("status", {}).get("phase")


def main():
    kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=true", timeout=120)
    kubectl("create", "namespace", NS)
    wait_until("the default service account",
               lambda: kubectl("get", "serviceaccount", "default", "-n", NS, check=False).returncode == 0)
    owner = json.loads(kubectl("create", "configmap", "owner", "-n", NS, "-o", "json").stdout)
    owned = {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                  "uid": owner["metadata"]["uid"], "controller": True,
                                  "blockOwnerDeletion": True}]}
    pods = {
        "running": pod("running", extra_meta=owned),
        "succeeded": pod("succeeded", {"test.disttrain.io/exit-code": "0",
                                       "test.disttrain.io/termination-message":
                                           '{"globalStep":1500,"loss":0.41}'}),
        "failed": pod("failed", {"test.disttrain.io/exit-code": "137"}),
        "restarted": pod("restarted", {"test.disttrain.io/exit-code": "3"}, restart="OnFailure"),
        "deleting": pod("deleting", extra_meta={"finalizers": ["test.disttrain.io/hold"]}),
        "pending": pod("pending", node_selector={"type": "no-such-node"}),
        # Unscheduled, so that kwok's stages leave its conditions as patched (on a kwok node they
        # rewrite them); the encoding of the condition is the point.
        "evicted": pod("evicted", node_selector={"type": "no-such-node"},
                       extra_meta={"finalizers": ["test.disttrain.io/hold"]}),
        # Unscheduled too, its container status patched as a kubelet writes it for an image it
        # cannot pull.
        "pulling": pod("pulling", node_selector={"type": "no-such-node"}),
    }
    apply({"apiVersion": "v1", "kind": "List", "items": list(pods.values())}, NS)
    apply({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "running", "labels": {"app.kubernetes.io/managed-by": "disttrain-operator"},
                        **owned},
           "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                    "selector": {"job": "x"}, "ports": [{"name": "tfjob-port", "port": 2222}]}}, NS)
    wait_until("pods in their states", lambda: phase("running") == "Running" and phase("succeeded") == "Succeeded"
               and phase("failed") == "Failed" and phase("deleting") == "Running"
               and get_json("pod", "restarted", "-n", NS)["status"].get("containerStatuses", [{}])[0]
               .get("restartCount", 0) >= 1, timeout=60)
    kubectl("delete", "pod", "deleting", "-n", NS, "--wait=false")
    wait_until("the deletion mark",
               lambda: get_json("pod", "deleting", "-n", NS)["metadata"].get("deletionTimestamp"))
    # What the taint manager does to a pod on a node lost past its toleration: the
    # DisruptionTarget condition and the delete. Deleted first here: on a pod not being deleted,
    # the disruption controller resets the condition to False within seconds.
    kubectl("delete", "pod", "evicted", "-n", NS, "--wait=false")
    wait_until("the eviction",
               lambda: get_json("pod", "evicted", "-n", NS)["metadata"].get("deletionTimestamp"))
    kubectl("patch", "pod", "evicted", "-n", NS, "--subresource=status", "--type=strategic", "-p", json.dumps(
        {"status": {"conditions": [{"type": "DisruptionTarget", "status": "True",
                                    "reason": "DeletionByTaintManager",
                                    "message": "Taint manager: deleting due to NoExecute taint",
                                    "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}}))
    kubectl("patch", "pod", "pulling", "-n", NS, "--subresource=status", "--type=merge", "-p", json.dumps(
        {"status": {"containerStatuses": [
            {"name": "tensorflow", "image": "registry.example/trainer:1", "imageID": "", "ready": False,
             "restartCount": 0, "started": False,
             "state": {"waiting": {"reason": "ImagePullBackOff",
                                   "message": 'Back-off pulling image "registry.example/trainer:1"'}}}]}}))
    only = set(sys.argv[1:])
    objects = [("pods", name) for name in pods] + [("services", "running")]
    if only:
        objects = [(r, n) for r, n in objects if (f"service-{n}" if r == "services" else n) in only]
    for resource, name in objects:
        path = f"/api/v1/namespaces/{NS}/{resource}/{name}"
        for _ in range(20):
            as_json = fetch(path, "application/json")
            as_proto = fetch(path, PROTOBUF)
            again = fetch(path, "application/json")
            if as_json == again:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"{name} never held still")
        prefix = "service-" if resource == "services" else ""
        with open(os.path.join(HERE, f"{prefix}{name}.json"), "wb") as f:
            f.write(json.dumps(json.loads(as_json), indent=1, sort_keys=True).encode() + b"\n")
        with open(os.path.join(HERE, f"{prefix}{name}.pb"), "wb") as f:
            f.write(as_proto)
    selector = "labelSelector=app.kubernetes.io%2Fmanaged-by%3Ddisttrain-operator"
    if not only:
        with open(os.path.join(HERE, "pods.list.pb"), "wb") as f:
            f.write(fetch(f"/api/v1/namespaces/{NS}/pods?{selector}", PROTOBUF))
        with open(os.path.join(HERE, "pods.watch.pb"), "wb") as f:
            f.write(fetch(f"/api/v1/namespaces/{NS}/pods?{selector}&watch=true&resourceVersion=0"
                          "&timeoutSeconds=1", PROTOBUF))
    for held in ("deleting", "evicted"):
        kubectl("patch", "pod", held, "-n", NS, "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    kubectl("delete", "namespace", NS, "--wait=false")
    print(f"fixtures written to {HERE}")


if __name__ == "__main__":
    main()
