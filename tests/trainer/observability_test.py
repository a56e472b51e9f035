"""What a user watches while the trainer runs, read by clients this project did not write:
TensorBoard's own event reader (the `tensorboard` package) over the chief's and evaluator's event files,
Prometheus text from every task's /metrics, and the termination message Kubernetes keeps.
The values must be the ones the trainer reported on stdout.

Runs in the venv of tests/python/venv.sh."""
import json
import os
import re
import tempfile
import time
import unittest
import urllib.request

import numpy as np
from tensorboard.backend.event_processing import event_accumulator

from membership_test import Cluster
from trainer_test import Run


def scalars(run_dir):
    acc = event_accumulator.EventAccumulator(run_dir, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def scrape(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def f32(x):
    return float(np.float32(x))


class TensorBoardAndMetricsTest(unittest.TestCase):
    def test_tensorboard_reads_the_scalars_the_chief_and_evaluator_reported(self):
        run = Run(["--ps", "1", "--workers", "1", "--chief", "--evaluator"],
                  ["--mode", "sync", "--model", "mlp", "--steps", "400", "--log-every", "100",
                   "--checkpoint-steps", "100", "--metrics-address", "127.0.0.1:0", "--batch-size", "64"])

        def ports():
            found = {m.group(1): int(m.group(2)) for l in list(run.stderr)
                     if (m := re.search(r'"serving /metrics" task=(\S+) port=(\d+)', l))}
            return found if len(found) == 4 else None

        port = run.wait_for("every task's /metrics", ports)
        chief = run.wait_for("the chief past step 50",
                             lambda: (m := scrape(port["chief-0"])).get("disttrain_trainer_global_step", 0) > 50 and m)
        ps = scrape(port["ps-0"])
        worker = scrape(port["worker-0"])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))

        # /metrics while training: each role shows its own families with live values.
        self.assertGreater(chief["disttrain_trainer_local_steps_total"], 0)
        self.assertGreater(chief["disttrain_trainer_examples_per_second"], 0)
        self.assertGreater(chief['disttrain_trainer_rpc_bytes_total{direction="pushed"}'], 0)
        self.assertGreater(chief['disttrain_trainer_rpc_duration_seconds_count{op="push_pull"}'], 0)
        self.assertGreater(worker["disttrain_trainer_global_step"], 0)
        self.assertGreater(ps["disttrain_ps_pushes_applied_total"], 0)
        self.assertFalse([k for k in ps if k.startswith("disttrain_trainer_")], "a ps shows replica metrics")

        # The chief's scalars: loss at every logged step, exactly the loss it printed.
        train = scalars(os.path.join(run.model_dir, "train"))
        printed = {e["global_step"]: e["loss"] for e in run.events("step") if e["task"] == "chief-0"}
        self.assertEqual([s for s, _ in train["loss"]], sorted(printed))
        for step, value in train["loss"]:
            self.assertEqual(value, f32(printed[step]), f"loss at step {step}")
        # Rates: sync with 2 replicas aggregates 2 batches of 64 per global step.
        self.assertEqual([s for s, _ in train["global_step/sec"]], sorted(printed)[1:])
        for (step, rate), (_, examples) in zip(train["global_step/sec"], train["examples/sec"]):
            self.assertGreater(rate, 0)
            self.assertAlmostEqual(examples, rate * 128, delta=examples * 1e-5)

        # The evaluator's scalars: accuracy and loss at each checkpoint, as it printed them.
        evaluated = {e["global_step"]: e for e in run.events("eval")}
        eval_scalars = scalars(os.path.join(run.model_dir, "eval"))
        self.assertIn(400, evaluated)
        self.assertEqual({s for s, _ in eval_scalars["accuracy"]}, set(evaluated))
        for step, value in eval_scalars["accuracy"]:
            self.assertEqual(value, f32(evaluated[step]["accuracy"]), f"accuracy at step {step}")
        for step, value in eval_scalars["loss"]:
            self.assertEqual(value, f32(evaluated[step]["loss"]), f"eval loss at step {step}")
        self.assertGreater(dict(eval_scalars["accuracy"])[400], 0.7)

    def test_examples_per_second_counts_the_replicas_that_are_live(self):
        # Sync, chief + 2 workers: a global step averages 3 batches, then 2 once worker-1 leaves
        # (a scale-down): the chief's examples/sec follows, not its TF_CONFIG's count.
        c = Cluster(workers=2, extra=["--log-every", "100", "--batch-size", "16"])
        try:
            for task in ("chief-0", "worker-0", "worker-1"):
                c.start(task, 2)
            c.wait_for("3 live replicas", lambda: c.ps() == (3, 3))
            c.advances(600)
            left_at = c.step()
            self.assertEqual(c.stop("worker-1"), 143)
            c.advances(1000)
            self.assertEqual(c.stop("chief-0"), 143)
        finally:
            c.close()
        train = scalars(os.path.join(c.model_dir, "train"))
        rates, examples = dict(train["global_step/sec"]), dict(train["examples/sec"])
        before = [s for s in rates if s <= left_at - 100]
        after = [s for s in rates if s >= left_at + 300]
        self.assertTrue(before and after, f"summaries at {sorted(rates)}, worker-1 left at {left_at}")
        for s in before:
            self.assertAlmostEqual(examples[s] / (rates[s] * 16), 3, delta=1e-4, msg=f"step {s}")
        for s in after:
            self.assertAlmostEqual(examples[s] / (rates[s] * 16), 2, delta=1e-4, msg=f"step {s}")

    def test_summary_dir_moves_the_event_files(self):
        summaries = tempfile.mkdtemp(prefix="disttrain-summaries-")
        run = Run(["--ps", "1", "--workers", "0", "--chief"],
                  ["--model", "toy", "--steps", "30", "--log-every", "10", "--summary-dir", summaries])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        self.assertEqual([s for s, _ in scalars(os.path.join(summaries, "train"))["loss"]], [0, 10, 20])
        self.assertFalse(os.path.exists(os.path.join(run.model_dir, "train")))


class TerminationMessageTest(unittest.TestCase):
    def test_the_chief_leaves_its_result_where_kubernetes_reads_it(self):
        path = tempfile.mktemp(prefix="termination-log-")
        open(path, "w").close()  # the kubelet creates the file; the trainer only writes an existing one
        run = Run(["--ps", "1", "--workers", "1", "--chief"],
                  ["--model", "mlp", "--steps", "60", "--termination-message-path", path])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        done = run.events("done")[0]
        with open(path) as f:
            result = json.loads(f.read())
        self.assertEqual(result["globalStep"], 60)
        self.assertEqual(result["loss"], done["loss"])
        self.assertEqual(result["trainAccuracy"], done["train_accuracy"])
        self.assertGreater(result["trainSeconds"], 0)

    def test_nothing_is_written_outside_kubernetes(self):
        path = os.path.join(tempfile.mkdtemp(), "termination-log")
        run = Run(["--ps", "1", "--workers", "0", "--chief"],
                  ["--model", "toy", "--steps", "10", "--termination-message-path", path])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        self.assertFalse(os.path.exists(path))


if __name__ == "__main__":
    unittest.main()
