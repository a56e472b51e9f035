"""disttrain-trainer as real processes talking gRPC on loopback: the local launcher runs a whole
cluster; Fashion-MNIST comes from the Debian package dataset-fashion-mnist."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import unittest

BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(os.path.dirname(__file__), "../../build/bin"))
TRAINER = os.path.join(BIN, "disttrain-trainer")


class Run:
    """One `disttrain-trainer local` run; collects stdout events and stderr lines as they come."""

    def __init__(self, launcher_args, trainer_args):
        self.model_dir = tempfile.mkdtemp(prefix="disttrain-model-")
        self.proc = subprocess.Popen([TRAINER, "local", *launcher_args, "--", "--model-dir", self.model_dir,
                                      *trainer_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stdout, self.stderr = [], []
        self.threads = [threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr), daemon=True)]
        for t in self.threads:
            t.start()

    @staticmethod
    def _read(stream, into):
        for line in stream:
            into.append(line)

    def wait(self, timeout=600):
        code = self.proc.wait(timeout=timeout)
        for t in self.threads:
            t.join()
        return code

    def events(self, kind):
        out = []
        for line in list(self.stdout):
            m = re.match(r"^(\[[^\]]+\] )?(\{.*\})\s*$", line)
            if m:
                j = json.loads(m.group(2))
                if j.get("event") == kind:
                    out.append(j)
        return out

    def summary(self):
        return json.loads(self.stdout[-1])

    def wait_for(self, what, predicate, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = predicate()
            if v:
                return v
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; stderr tail:\n{''.join(self.stderr[-20:])}")


def sequential_toy(steps, lr):
    """The toy problem trained sequentially in float32, as one process would."""
    import struct

    def f32(x):
        return struct.unpack("f", struct.pack("f", x))[0]
    a = b = f32(0.0)
    for _ in range(steps):
        r = f32(f32(a + b) - f32(100.0))
        a = f32(a + f32(f32(-lr) * r))
        b = f32(b + f32(f32(-lr) * r))
    return a, b


class ToyTest(unittest.TestCase):
    def test_sync_over_two_ps_and_two_workers_matches_sequential_training_exactly(self):
        steps, lr = 30, 0.1
        run = Run(["--ps", "2", "--workers", "2"],
                  ["--model", "toy", "--mode", "sync", "--steps", str(steps), "--learning-rate", str(lr),
                   "--checkpoint-steps", "10", "--log-every", "0"])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        done = run.events("done")[0]
        a, b = sequential_toy(steps, lr)
        self.assertEqual(done["global_step"], steps)
        # Sync averaging of two identical gradients is exact, so the values are bit-identical.
        self.assertEqual(done["variables"], [[a, a], [b, b]])
        self.assertAlmostEqual(a, 50 * (1 - (1 - 2 * lr) ** steps), places=3)  # the closed form
        summary = run.summary()
        self.assertEqual(summary["event"], "summary")
        self.assertEqual(summary["exit_code"], 0)
        self.assertEqual(summary["global_step"], steps)


class FashionMnistTest(unittest.TestCase):
    def train(self, mode, steps, lr, extra=()):
        run = Run(["--ps", "2", "--workers", "2", "--chief", "--evaluator"],
                  ["--model", "mlp", "--hidden", "100", "--mode", mode, "--steps", str(steps),
                   "--learning-rate", str(lr), "--batch-size", "64", "--checkpoint-steps", "250",
                   "--log-every", "500", *extra])
        return run

    def test_sync_mlp_reaches_084(self):
        run = self.train("sync", 1500, 0.1)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"sync: accuracy {s['accuracy']:.4f} in {s['seconds']:.1f} s")
        self.assertEqual(s["global_step"], 1500)
        self.assertGreaterEqual(s["accuracy"], 0.84)
        evals = run.events("eval")
        self.assertEqual(evals[-1]["examples"], 10000)
        self.assertGreater(evals[-1]["accuracy"], evals[0]["accuracy"])

    def test_async_mlp_reaches_082(self):
        run = self.train("async", 3000, 0.05)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"async: accuracy {s['accuracy']:.4f} in {s['seconds']:.1f} s")
        self.assertGreaterEqual(s["accuracy"], 0.82)

    def test_parameter_server_killed_mid_run_is_restored_and_the_job_reaches_its_target(self):
        run = self.train("sync", 1500, 0.1)
        pid = run.wait_for("ps-1 to start", lambda: next(
            (int(m.group(1)) for l in list(run.stderr) if (m := re.search(r"\"started task\" task=ps-1 pid=(\d+)", l))), None))
        run.wait_for("a checkpoint at step 500", lambda: any(e["global_step"] >= 500 for e in run.events("checkpoint")))
        os.kill(pid, signal.SIGKILL)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        log = "".join(run.stderr)
        self.assertIn("\"restarting task\" task=ps-1", log)
        self.assertIn("lost a parameter server", log)
        restores = run.events("restore")
        self.assertTrue(restores, "the chief restored the parameter servers from a checkpoint")
        self.assertGreaterEqual(restores[0]["global_step"], 500)
        s = run.summary()
        self.assertEqual(s["global_step"], 1500)
        self.assertGreaterEqual(s["accuracy"], 0.84)


class BadConfigTest(unittest.TestCase):
    CASES = [
        (None, "TF_CONFIG is not set"),
        ("{not json", "TF_CONFIG: is not valid JSON"),
        ('{"cluster":{"ps":["a:1"],"worker":["b:1"]},"task":{"type":"boss","index":0}}', 'task.type "boss" is not a role'),
        ('{"cluster":{"ps":["a:1"],"worker":["b:1"]},"task":{"type":"worker","index":3}}', "task.index 3 is out of range"),
        ('{"cluster":{"ps":["a:1"],"worker":["b:1"]},"task":{"type":"chief","index":0}}', 'role "chief" is missing from cluster'),
        ('{"cluster":{"worker":["b:1"]},"task":{"type":"worker","index":0}}', 'no "ps" task'),
    ]

    def test_bad_tf_config_exits_2_with_a_clear_message(self):
        for tf_config, message in self.CASES:
            with self.subTest(tf_config=tf_config):
                env = dict(os.environ)
                env.pop("TF_CONFIG", None)
                if tf_config is not None:
                    env["TF_CONFIG"] = tf_config
                r = subprocess.run([TRAINER, "--model", "toy"], env=env, capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(message, r.stderr)

    def test_bad_flags_exit_2(self):
        for args, message in [(["--mode", "fast"], "--mode must be sync or async"),
                              (["--model", "resnet"], '--model "resnet" is not toy, softmax or mlp'),
                              (["--steps", "0"], "--steps must be at least 1")]:
            r = subprocess.run([TRAINER, *args], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2)
            self.assertIn(message, r.stderr)
        r = subprocess.run([TRAINER, "local", "--ps", "1", "--workers", "1", "--", "--learning-rate", "-1"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--learning-rate must be positive", r.stderr)

    def test_unreachable_parameter_servers_exit_138_after_the_retry_budget(self):
        env = dict(os.environ, TF_CONFIG='{"cluster":{"ps":["127.0.0.1:1"],"worker":["127.0.0.1:2"]},'
                                          '"task":{"type":"worker","index":0}}')
        r = subprocess.run([TRAINER, "--model", "toy", "--retry-seconds", "2"], env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 138, r.stderr[-500:])
        self.assertIn("unreachable past the retry budget", r.stderr)


if __name__ == "__main__":
    unittest.main()
