"""Workers joining and leaving a running synchronous job (issue #37), as real trainer processes on
loopback: the parameter server aggregates one gradient per live replica, a worker stopped with
SIGTERM (what a scaled-down pod gets) leaves at once, and one that vanishes without a word (a
lost pod) stops counting after --replica-timeout-seconds. The ps's own /metrics and log tell."""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

from trainer_test import TRAINER, free_ports


def scrape(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {name: float(value) for line in text.splitlines() if line and not line.startswith("#")
            for name, value in [line.rsplit(" ", 1)]}


class Cluster:
    """A ps, and training replicas started and stopped one by one, each with the TF_CONFIG the
    operator would give it at that moment (a worker scaled in sees every worker up to itself)."""

    def __init__(self, workers, extra=()):
        self.ps_port, self.chief_port, *self.worker_ports = free_ports(2 + 4)
        self.metrics = dict(zip(["ps-0", "chief-0", "worker-0", "worker-1", "worker-2"], free_ports(5)))
        self.model_dir = tempfile.mkdtemp(prefix="disttrain-model-")
        self.extra = list(extra)
        self.procs, self.stderr = {}, {}
        self.start("ps-0", workers)

    def tf_config(self, task, workers):
        kind, index = task.split("-")
        cluster = {"ps": [f"127.0.0.1:{self.ps_port}"], "chief": [f"127.0.0.1:{self.chief_port}"],
                   "worker": [f"127.0.0.1:{p}" for p in self.worker_ports[:workers]]}
        return json.dumps({"cluster": cluster, "task": {"type": kind, "index": int(index)}})

    def start(self, task, workers):
        args = [TRAINER, "--mode", "sync", "--model", "toy", "--steps", "1000000000",
                "--model-dir", self.model_dir, "--metrics-address", f"127.0.0.1:{self.metrics[task]}",
                "--retry-seconds", "120", *self.extra]
        p = subprocess.Popen(args, env=dict(os.environ, TF_CONFIG=self.tf_config(task, workers)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs[task], self.stderr[task] = p, []
        threading.Thread(target=lambda: self.stderr[task].extend(p.stderr), daemon=True).start()

    def stop(self, task, sig=signal.SIGTERM):
        self.procs[task].send_signal(sig)
        return self.procs[task].wait(timeout=30)

    def close(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    def ps(self):
        m = scrape(self.metrics["ps-0"])
        return int(m.get("disttrain_ps_live_replicas", -1)), int(m.get("disttrain_ps_replicas_to_aggregate", -1))

    def step(self):
        return scrape(self.metrics["chief-0"]).get("disttrain_trainer_global_step", 0)

    def wait_for(self, what, predicate, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if predicate():
                    return
            except OSError:  # a /metrics not listening yet
                pass
            time.sleep(0.05)
        tails = {t: "".join(e[-8:]) for t, e in self.stderr.items()}
        raise AssertionError(f"timed out waiting for {what}; stderr tails: {json.dumps(tails, indent=1)}")

    def advances(self, steps=200, timeout=30):
        """The global step moves `steps` further within `timeout`: training goes on."""
        seen = []
        self.wait_for("the chief's /metrics", lambda: seen.append(self.step()) or True)
        start = seen[0]
        self.wait_for(f"{steps} more global steps after {start}", lambda: self.step() >= start + steps, timeout)


class MembershipTest(unittest.TestCase):
    def test_the_aggregated_count_follows_workers_scaled_in_and_out(self):
        c = Cluster(workers=1)
        try:
            c.start("chief-0", 1)
            c.start("worker-0", 1)
            c.wait_for("2 live replicas, 2 gradients per step", lambda: c.ps() == (2, 2))
            c.advances()

            c.start("worker-1", 2)  # kubectl scale --replicas 2
            c.wait_for("worker-1 joined: 3 gradients per step", lambda: c.ps() == (3, 3))
            c.advances()
            pushed = scrape(c.metrics["worker-1"])["disttrain_trainer_local_steps_total"]
            self.assertGreater(pushed, 50, "the new worker computes every step")

            self.assertEqual(c.stop("worker-1"), 143)  # scaled back: its pod gets SIGTERM
            self.assertEqual(c.ps(), (2, 2), "it left before exiting")
            c.advances()
            self.assertEqual(c.stop("worker-0"), 143)
            self.assertEqual(c.ps(), (1, 1))
            c.advances()
            log = "".join(c.stderr["ps-0"])
            self.assertIn('"a training replica joined" replica=worker-1 live_replicas=3', log)
            self.assertIn('"a training replica left" replica=worker-1 live_replicas=2', log)
            self.assertEqual(c.stop("chief-0"), 143)
        finally:
            c.close()

    def test_a_replica_that_vanishes_stops_counting_after_the_timeout(self):
        c = Cluster(workers=2, extra=["--replica-timeout-seconds", "3"])
        try:
            for task in ("chief-0", "worker-0", "worker-1"):
                c.start(task, 2)
            c.wait_for("3 live replicas", lambda: c.ps() == (3, 3))
            c.advances()
            c.stop("worker-1", signal.SIGKILL)  # its node is lost: it says nothing
            killed = time.monotonic()
            c.wait_for("worker-1 dropped after 3 s of silence", lambda: c.ps() == (2, 2), timeout=20)
            dropped = time.monotonic() - killed
            self.assertGreaterEqual(dropped, 2.5, "not before its silence passed the timeout")
            c.advances()
            self.assertIn('"a training replica went silent; no longer waiting for it" replica=worker-1',
                          "".join(c.stderr["ps-0"]))
            print(f"worker-1 killed; dropped {dropped:.1f} s later, then training went on", flush=True)
            self.assertEqual(c.stop("chief-0"), 143)
        finally:
            c.close()


if __name__ == "__main__":
    unittest.main()
