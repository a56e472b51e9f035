"""Every training scheme trains Fashion-MNIST through real processes (`disttrain-trainer local`:
2 parameter servers, 2 workers, an evaluator fetching checkpoints over gRPC), each to a documented
test accuracy it reaches here (docs/trainer.md and docs/notes/trainer-schemes.md list them with bench/schemes.py's figures).
The thresholds leave about 2 points under what the scheme reached in repeated runs here."""
import json
import os
import subprocess
import tempfile
import time
import unittest

from trainer_test import TRAINER, Run

# scheme: (trainer flags, minimum test accuracy). --steps counts commits: a scheme with local
# steps computes --local-steps batches per commit. After each row: the final accuracy of repeated
# runs on 2 cores shared with other builds (evaluator on --model-dir, release build; 3 runs, 10
# where the margin was thin). sync and sagn are deterministic.
SCHEMES = {
    "hogwild": (["--steps", "4000", "--learning-rate", "0.05"], 0.82),  # 0.850-0.852
    # 1,000 commits ended at 0.815-0.862 (18 runs, and 0.8146 in one CI run); 1,500 at 0.852-0.868 (14).
    "downpour": (["--steps", "1500", "--local-steps", "4", "--learning-rate", "0.03"], 0.83),
    # 0.811-0.838 (10 runs): 0.80 left 0.011 under the lowest, inside its 0.027 spread.
    "downpour-sgd": (["--steps", "1500", "--local-steps", "4", "--learning-rate", "0.01"], 0.79),
    "agn": (["--steps", "700", "--local-steps", "4", "--learning-rate", "0.1"], 0.81),  # 0.826-0.838 (10)
    "sync": (["--steps", "1000", "--learning-rate", "0.1"], 0.82),  # 0.8402
    "sagn": (["--steps", "500", "--local-steps", "4", "--learning-rate", "0.1"], 0.81),  # 0.8329
    "dynsgd": (["--steps", "4000", "--learning-rate", "0.05"], 0.80),  # 0.834-0.841
    # 0.831-0.844 (10 runs): 0.82 left 0.011 under the lowest, inside its 0.013 spread.
    "aeasgd": (["--steps", "600", "--local-steps", "4", "--learning-rate", "0.15"], 0.81),
    "aeamsgd": (["--steps", "500", "--local-steps", "4", "--learning-rate", "0.05"], 0.82),  # 0.856-0.859
}


def train(mode, flags, launcher=("--ps", "2", "--workers", "2", "--evaluator")):
    checkpoint = flags[flags.index("--steps") + 1]
    run = Run(list(launcher), ["--model", "mlp", "--hidden", "100", "--batch-size", "64", "--log-every", "0",
                               "--checkpoint-steps", checkpoint, "--mode", mode, *flags])
    return run


class SchemeConvergenceTest(unittest.TestCase):
    def check(self, mode, flags=None, minimum=None, extra=()):
        flags, threshold = SCHEMES[mode] if flags is None else (flags, minimum)
        run = train(mode, [*flags, *extra])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"{mode} {' '.join(extra)}: accuracy {s['accuracy']:.4f} at step {s['global_step']} "
              f"in {s['seconds']:.1f} s", flush=True)
        self.assertGreaterEqual(s["global_step"], int(flags[flags.index("--steps") + 1]))
        self.assertGreaterEqual(s["accuracy"], threshold)
        return run

    def test_hogwild(self):
        self.check("hogwild")

    def test_downpour(self):
        self.check("downpour")

    def test_downpour_sgd(self):
        self.check("downpour-sgd")

    def test_agn(self):
        self.check("agn")

    def test_sync(self):
        self.check("sync")

    def test_sync_with_a_learning_rate_per_worker(self):
        # 0.8409 (3 runs; deterministic).
        self.check("sync", extra=("--worker-learning-rates", "0.15,0.05"))

    def test_sagn(self):
        self.check("sagn")

    def test_dynsgd(self):
        self.check("dynsgd")

    def test_aeasgd(self):
        self.check("aeasgd")

    def test_aeamsgd(self):
        self.check("aeamsgd")

    def test_local_replicas_average_two_towers_per_worker(self):
        # Each global step averages 2 workers x 2 towers: 4 batches per step. 0.8461 (3 runs).
        self.check("sync", ["--steps", "800", "--learning-rate", "0.2"], 0.82, extra=("--local-replicas", "2"))


class DefaultFlagsTest(unittest.TestCase):
    """Every flag at its default but --mode (1 ps, 2 workers, an evaluator): the asynchronous
    schemes get their own --steps and --learning-rate (trainer/schemes/scheme_defaults.cc) and end
    where the others do at theirs (0.84-0.87). With the common defaults (1,000 steps at 0.1) they
    ended at 0.789-0.828 (hogwild) and 0.790-0.822 (dynsgd) in 6 runs each, and this test failed
    both (steps and, for hogwild, accuracy)."""

    def check(self, mode, steps, minimum):
        # The evaluator reads the checkpoints from --model-dir, so the final one is always scored
        # whatever the order in which the launcher stops the tasks; training is untouched.
        run = Run(["--ps", "1", "--workers", "2", "--evaluator"],
                  ["--mode", mode, "--log-every", "0", "--eval-source", "model-dir"])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"{mode} at default flags: accuracy {s['accuracy']:.4f} at step {s['global_step']} "
              f"in {s['seconds']:.1f} s", flush=True)
        self.assertGreaterEqual(s["global_step"], steps)
        self.assertGreaterEqual(s["accuracy"], minimum)

    def test_hogwild_converges_with_its_defaults(self):
        # 0.845-0.855 in 13 runs on 2 loaded cores; on 2026-11-26 0.8196 once in make test (it
        # failed the old 0.83 bound) and 0.829-0.856 in 12 runs after it: the last iterate of
        # lock-free updates is noisy. 0.02 under the lowest, as for dynsgd; --steps still tells
        # these defaults from the common ones (1,000 steps, which ended at 0.789-0.828).
        self.check("hogwild", 4000, 0.80)

    def test_dynsgd_converges_with_its_defaults(self):
        # 0.841-0.859 in 32 of 33 runs on 2 loaded cores, one at 0.820 (its full η on a fresh
        # commit makes the last iterate noisier than hogwild's η / 2): 0.02 under that one.
        self.check("dynsgd", 6000, 0.80)


class EvaluatorOverGrpcTest(unittest.TestCase):
    def test_the_evaluator_needs_no_shared_model_dir(self):
        """Tasks started by hand with TF_CONFIG, each with its own --model-dir: the evaluator's stays
        empty, yet it evaluates the chief's checkpoints, fetched from ps 0: each time the newest one
        (a checkpoint made while it evaluates the previous one may be skipped, as TensorFlow's
        evaluator does), and always the last."""
        dirs = {t: tempfile.mkdtemp(prefix=f"disttrain-{t}-") for t in ("ps", "chief", "evaluator")}
        ports = [free_port(), free_port()]
        cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "chief": [f"127.0.0.1:{ports[1]}"]}
        args = ["--model", "mlp", "--mode", "sync", "--steps", "300", "--checkpoint-steps", "100",
                "--log-every", "0", "--metrics-address", "0"]
        procs = {}
        try:
            for task in ("ps", "chief", "evaluator"):
                env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": task, "index": 0}}))
                procs[task] = subprocess.Popen([TRAINER, *args, "--model-dir", dirs[task]], env=env,
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(procs["chief"].wait(timeout=300), 0)
            self.assertEqual(procs["evaluator"].wait(timeout=60), 0)
            evals = [json.loads(l) for l in procs["evaluator"].stdout.read().splitlines() if '"eval"' in l]
            steps = [e["global_step"] for e in evals if e["global_step"] > 0]
            self.assertEqual(steps, sorted(set(steps)), "each checkpoint once, in order")
            self.assertLessEqual(set(steps), {100, 200, 300}, "only the chief's checkpoints")
            self.assertEqual(steps[-1], 300, "the last checkpoint is evaluated")
            self.assertGreater(evals[-1]["accuracy"], 0.7)
            self.assertEqual(os.listdir(dirs["evaluator"]), ["eval"], "only its TensorBoard events")
            self.assertTrue(any(f.startswith("ckpt-") for f in os.listdir(dirs["chief"])))
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.terminate()
                    p.wait(timeout=30)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    unittest.main()
