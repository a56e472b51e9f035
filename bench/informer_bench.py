"""Informer benchmark on the local cluster.

1. Memory: RSS of an informer process (build/bin/informer_probe) and of the operator once their
   caches hold N pods (default 5,000) labelled as the operator's.
2. Event latency: 50 pod creates sent straight to the API server over HTTPS (client
   certificate from the kubeconfig); the latency of each is the time from the create's response
   (t1) to the informer's event (t2). The create's own round trip (t0..t1) is reported too: the
   true latency lies between t2 - t1 and t2 - t0.
Prints one JSON line.
"""
import base64
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from kube import KUBECONFIG, Namespace, apply, https_client, kubectl, wait_until  # noqa: E402
from operator_process import OperatorProcess  # noqa: E402
from runtime_test import Probe  # noqa: E402
from crd_test import install_crd  # noqa: E402

MANAGED = "app.kubernetes.io/managed-by=disttrain-operator"


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int([l for l in f if l.startswith("VmRSS:")][0].split()[1]) / 1024


def pods_list(ns, start, count):
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"cached-{i:05d}", "namespace": ns,
                      "labels": {"app.kubernetes.io/managed-by": "disttrain-operator", "probe": "yes",
                                 "disttrain.io/job-name": "bench"}},
         "spec": {"containers": [{"name": "main", "image": "registry.example/trainer:1",
                                  "resources": {"requests": {"cpu": "10m"}}}]}}
        for i in range(start, start + count)]}


def main(n=5000):
    install_crd()
    out = {"cached_pods": n}
    with Namespace("informer-bench") as ns:
        for start in range(0, n, 500):
            apply(pods_list(ns, start, min(500, n - start)))
        probe = Probe(ns, selector=MANAGED)
        op = OperatorProcess("informer-bench", "--namespace", ns).start()
        try:
            wait_until(f"the probe to cache {n} pods", lambda: probe.stats()["objects"] >= n, timeout=300)
            time.sleep(2)
            out["informer_probe_rss_mb"] = round(rss_mb(probe.proc.pid), 1)
            out["operator_rss_mb"] = round(rss_mb(op.proc.pid), 1)

            server, ctx = https_client()
            upper, lower, rtt = [], [], []
            for i in range(50):
                body = json.dumps(pods_list(ns, 100000 + i, 1)["items"][0]).encode()
                req = urllib.request.Request(f"{server}/api/v1/namespaces/{ns}/pods", data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
                t0 = time.time()
                urllib.request.urlopen(req, context=ctx).read()
                t1 = time.time()
                name = f"cached-{100000 + i:05d}"
                seen = wait_until(f"{name} in the informer", lambda: probe.find("add", name), timeout=10)
                t2 = seen[0]["unix_us"] / 1e6
                upper.append((t2 - t0) * 1000)
                lower.append((t2 - t1) * 1000)
                rtt.append((t1 - t0) * 1000)
            q = lambda v, p: sorted(v)[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]  # noqa: E731
            out.update({
                "event_latency_ms_p50": round(statistics.median(lower), 2),
                "event_latency_ms_p99": round(q(lower, 99), 2),
                "event_latency_upper_bound_ms_p50": round(statistics.median(upper), 2),
                "create_round_trip_ms_p50": round(statistics.median(rtt), 2),
            })
        finally:
            probe.stop()
            op.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
