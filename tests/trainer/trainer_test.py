"""disttrain-trainer as real processes talking gRPC on loopback: the local launcher runs a whole
cluster; Fashion-MNIST comes from the Debian package dataset-fashion-mnist."""
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(os.path.dirname(__file__), "../../build/bin"))
TRAINER = os.path.join(BIN, "disttrain-trainer")


def free_ports(n):
    ports = []
    for _ in range(n):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    return ports


class Run:
    """One `disttrain-trainer local` run; collects stdout events and stderr lines as they come."""

    def __init__(self, launcher_args, trainer_args, model_dir=None):
        """model_dir: None for a fresh temporary one, "" to let the launcher choose."""
        self.model_dir = tempfile.mkdtemp(prefix="disttrain-model-") if model_dir is None else model_dir
        dir_args = ["--model-dir", self.model_dir] if self.model_dir else []
        self.proc = subprocess.Popen([TRAINER, "local", *launcher_args, "--", *dir_args, *trainer_args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stdout, self.stderr = [], []
        self.threads = [threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr), daemon=True)]
        for t in self.threads:
            t.start()

    @staticmethod
    def _read(stream, into):
        with stream:
            for line in stream:
                into.append(line)

    def wait(self, timeout=600):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # Leave no task running for the next test: the launcher stops them all on SIGTERM.
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            raise
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

    def task_pids(self):
        """Every task process the launcher started, restarts included: {pid: task}."""
        return {int(m.group(2)): m.group(1) for l in list(self.stderr)
                if (m := re.search(r"\"started task\" task=(\S+) pid=(\d+)", l))}

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
        # 0.8469-0.8478 in 3 runs on 2 loaded cores (only the order of the float sums varies).
        run = self.train("sync", 1500, 0.1)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"sync: accuracy {s['accuracy']:.4f} in {s['seconds']:.1f} s")
        self.assertEqual(s["global_step"], 1500)
        self.assertGreaterEqual(s["accuracy"], 0.84)
        evals = run.events("eval")
        self.assertEqual(evals[-1]["examples"], 10000)
        self.assertGreater(evals[-1]["accuracy"], evals[0]["accuracy"])
        # The chief's step breakdown: exchange with the servers and gradient rounds, both inside
        # its training time (bench/gpu_bench.py reads them).
        done = run.events("done")[0]
        self.assertGreater(done["exchange_seconds"], 0)
        self.assertGreater(done["round_seconds"], 0)
        self.assertLessEqual(done["exchange_seconds"] + done["round_seconds"], done["train_seconds"])

    def test_async_mlp_reaches_082(self):
        # 3,000 steps ended at 0.81-0.84 (one CI run 0.810, under the threshold); 5,000 steps
        # ended at 0.845-0.856 in 6 runs, and at 0.837-0.853 in 3 more on 2 cores shared with
        # other builds: 0.017 over the threshold at worst.
        run = self.train("async", 5000, 0.05)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"async: accuracy {s['accuracy']:.4f} in {s['seconds']:.1f} s")
        self.assertGreaterEqual(s["accuracy"], 0.82)

    def test_parameter_server_killed_mid_run_is_restored_and_the_job_reaches_its_target(self):
        # 2,000 steps: at 1,500 the run after the kill ended at 0.842-0.850 (too close to 0.84).
        run = self.train("sync", 2000, 0.1)
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
        print(f"sync after a kill -9 of ps-1: accuracy {s['accuracy']:.4f}, restored at step "
              f"{restores[0]['global_step']}")
        self.assertEqual(s["global_step"], 2000)
        self.assertGreaterEqual(s["accuracy"], 0.84)

    def test_a_parameter_server_killed_mid_run_is_restored_from_the_chiefs_copy(self):
        # Checkpoints only at step 0 (--checkpoint-steps 100000): before the chief kept a copy of
        # the servers (--ps-copy-seconds, 0.5 s by default) it restored a killed ps from step 0's
        # checkpoint and the updates of the whole run were lost. Now the restore comes from a copy
        # taken at most about half a second before the kill: after step S1 the chief had 2.5 s to copy.
        run = self.train("sync", 3000, 0.1, ["--checkpoint-steps", "100000", "--log-every", "10"])
        pid = run.wait_for("ps-1 to start", lambda: next(
            (int(m.group(1)) for l in list(run.stderr) if (m := re.search(r"\"started task\" task=ps-1 pid=(\d+)", l))), None))

        def chief_step():
            return max((e["global_step"] for e in run.events("step") if e.get("task") == "chief-0"), default=0)
        s1 = run.wait_for("step 600", lambda: (s := chief_step()) >= 600 and s)
        time.sleep(2.5)
        s2 = chief_step()
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        restore = run.wait_for("the restore", lambda: next(iter(run.events("restore")), None), timeout=60)
        resumed = run.wait_for("a step past the restored one", lambda: chief_step() > restore["global_step"] and
                               any(e["global_step"] > restore["global_step"] for e in run.events("step")
                                   if e.get("task", "").startswith("worker")) and time.monotonic(), timeout=60)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        self.assertEqual(restore["source"], "copy", restore)
        self.assertGreaterEqual(restore["global_step"], s1, "the copy is older than 2.5 s before the kill")
        self.assertLessEqual(restore["global_step"], s2 + 200)
        s = run.summary()
        self.assertEqual(s["global_step"], 3000)
        done = run.events("done")[0]
        rate = done["global_step"] / done["train_seconds"]
        lost = s2 - restore["global_step"]
        print(f"sync, kill -9 of ps-1 at step >= {s2}: restored from the chief's copy at step "
              f"{restore['global_step']} (copy {restore['copy_age_seconds']:.2f} s old at the restore), "
              f"{lost} steps lost = {lost / rate:.2f} s at {rate:.0f} steps/s"
              f"; chief and workers stepping again {resumed - killed:.1f} s after the kill; "
              f"accuracy {s['accuracy']:.4f}")
        self.assertGreaterEqual(s["accuracy"], 0.84)


def running(pid):
    """True when `pid` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class LauncherTest(unittest.TestCase):
    def assert_no_task_left(self, run):
        pids = run.task_pids()
        self.assertTrue(pids, "the launcher logged the tasks it started")
        left = {pid: task for pid, task in pids.items() if running(pid)}
        self.assertEqual(left, {}, "tasks still running after the launcher exited")

    def test_a_failing_chief_stops_every_task_restarts_nothing_and_its_code_is_the_exit_code(self):
        model_dir = tempfile.mkdtemp(prefix="disttrain-model-")
        toy = Run(["--ps", "1", "--workers", "1"], ["--model", "toy", "--steps", "5", "--checkpoint-steps", "5",
                                                    "--log-every", "0"], model_dir=model_dir)
        self.assertEqual(toy.wait(), 0, "".join(toy.stderr[-20:]))
        # The MLP's chief finds the toy model's checkpoint in the same directory and exits 2.
        run = Run(["--ps", "2", "--workers", "2", "--chief", "--evaluator"],
                  ["--model", "mlp", "--steps", "100000", "--log-every", "0"], model_dir=model_dir)
        try:
            code = run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.proc.kill()
            self.fail("the launcher did not exit after its chief failed:\n" + "".join(run.stderr[-30:]))
        log = "".join(run.stderr)
        self.assertEqual(code, 2, log[-2000:])
        self.assertIn("holds another model", log)
        self.assertNotIn("restarting task", log)
        self.assertNotIn("exit_code=139", log, "a task crashed on the other model's checkpoint")
        self.assertEqual(run.summary()["exit_code"], 2)
        self.assert_no_task_left(run)

    def test_sigterm_ends_every_task_within_seconds(self):
        run = Run(["--ps", "2", "--workers", "2", "--chief", "--evaluator"],
                  ["--model", "mlp", "--mode", "sync", "--steps", "100000", "--checkpoint-steps", "50",
                   "--log-every", "0"])
        run.wait_for("a first checkpoint", lambda: run.events("checkpoint"))
        run.proc.send_signal(signal.SIGTERM)
        try:
            code = run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.proc.kill()
            self.fail("the launcher did not honour SIGTERM within 30 s:\n" + "".join(run.stderr[-30:]))
        self.assertEqual(code, 143)
        self.assertNotIn("restarting task", "".join(run.stderr))
        self.assert_no_task_left(run)

    def test_runs_without_model_dir_never_share_checkpoints(self):
        runs = []
        for model in ("mlp", "toy"):  # a toy run after an MLP run used to find the MLP's checkpoints
            run = Run(["--ps", "1", "--workers", "1"], ["--model", model, "--steps", "20", "--checkpoint-steps",
                                                         "10", "--log-every", "0"], model_dir="")
            run.wait()
            runs.append(run)
        self.assertEqual([r.proc.returncode for r in runs], [0, 0], "".join(runs[-1].stderr[-20:]))
        dirs = []
        for run in runs:
            m = re.search(r"checkpoints in (\S+)", "".join(run.stderr))
            self.assertIsNotNone(m, "the launcher prints where the checkpoints are")
            self.assertTrue(os.listdir(m.group(1)), "the chief wrote checkpoints there")
            dirs.append(m.group(1))
        self.assertNotEqual(dirs[0], dirs[1])


class FinalEvaluationTest(unittest.TestCase):
    RUNS = 20

    def test_the_final_checkpoint_is_evaluated_exactly_once_in_every_run(self):
        # The shape that lost the final evaluation in 9 of 10 runs: ps 0, which serves the evaluator the
        # chief's checkpoints, was stopped with everything else the moment the chief finished.
        for i in range(self.RUNS):
            run = Run(["--ps", "1", "--workers", "1", "--chief", "--evaluator"],
                      ["--mode", "sync", "--steps", "400", "--checkpoint-steps", "100", "--log-every", "0"])
            self.assertEqual(run.wait(timeout=300), 0, "".join(run.stderr[-20:]))
            evaluated = [e["global_step"] for e in run.events("eval")]
            self.assertEqual(evaluated.count(400), 1, f"run {i + 1}: evaluated steps {evaluated}\n"
                             + "".join(run.stderr[-20:]))
            final = [e for e in run.events("eval") if e["global_step"] == 400][0]
            summary = run.summary()
            self.assertEqual((summary["global_step"], summary["accuracy"], summary["final_evaluated"]),
                             (400, final["accuracy"], True), f"run {i + 1}: the summary reports the final one")


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
        for args, message in [(["--mode", "fast"], '--mode must be one of hogwild (or async), downpour, downpour-sgd, agn, sync, '
                                                   'sagn, dynsgd, aeasgd, aeamsgd; got "fast"'),
                              (["--mode", "agn", "--worker-learning-rates", "0.1,0.1"],
                               "--worker-learning-rates is for --mode sync only"),
                              (["--mode", "sync", "--worker-learning-rates", "0.1,x"],
                               '--worker-learning-rates: "x" is not a positive number'),
                              (["--local-steps", "0"], "--local-steps must be at least 1"),
                              (["--device", "tpu"], '--device must be cpu or cuda, got "tpu"'),
                              (["--eval-source", "nfs"], '--eval-source must be ps or model-dir, got "nfs"'),
                              (["--model", "resnet"], '--model "resnet" is not toy, softmax, mlp, lr, fm, deepfm or widedeep'),
                              (["--steps", "0"], "--steps must be at least 1"),
                              (["--hidden", "0"], '--hidden "0": "0" is not a layer width from 1 to 65536'),
                              (["--hidden", "a,b"], '--hidden "a,b": "a" is not a layer width'),
                              (["--hidden", ""], "--hidden is empty"),
                              (["--local-replicas", "-1"], "--local-replicas must be between 0"),
                              (["--ps-copy-seconds", "-1"], "--ps-copy-seconds must be between 0 and 3600"),
                              (["--ps-copy-seconds", "nan"], "--ps-copy-seconds must be between 0 and 3600")]:
            r = subprocess.run([TRAINER, *args], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2)
            self.assertIn(message, r.stderr)
        r = subprocess.run([TRAINER, "local", "--ps", "1", "--workers", "1", "--", "--learning-rate", "-1"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--learning-rate must be positive", r.stderr)

    def test_worker_learning_rates_must_name_every_replica(self):
        run = Run(["--ps", "1", "--workers", "2"], ["--model", "toy", "--mode", "sync", "--worker-learning-rates", "0.1"])
        self.assertEqual(run.wait(timeout=60), 2)
        self.assertIn("--worker-learning-rates lists 1 rates for 2 training replicas", "".join(run.stderr))

    def test_device_cuda_trains_on_a_gpu_or_exits_2_naming_what_is_missing(self):
        run = Run(["--ps", "1", "--workers", "1"], ["--model", "mlp", "--device", "cuda", "--steps", "20",
                                                    "--checkpoint-steps", "20", "--log-every", "0"])
        code = run.wait(timeout=120)
        log = "".join(run.stderr)
        if code == 0:  # a CUDA build on a machine with a GPU
            self.assertIn("computing gradients on CUDA devices", log)
        else:
            self.assertEqual(code, 2, log[-2000:])
            self.assertRegex(log, r"--device cuda.*(built without CUDA kernels|no CUDA|CUDA-capable)")

    def test_device_cuda_in_a_pod_given_no_gpu_exits_2_naming_the_mask(self):
        for var, value in (("NVIDIA_VISIBLE_DEVICES", "void"), ("CUDA_VISIBLE_DEVICES", "")):
            with self.subTest(var=var):
                env = dict(os.environ, **{var: value})
                env.pop("NVIDIA_VISIBLE_DEVICES" if var == "CUDA_VISIBLE_DEVICES" else "CUDA_VISIBLE_DEVICES", None)
                with tempfile.TemporaryDirectory(prefix="disttrain-model-") as model_dir:
                    r = subprocess.run([TRAINER, "local", "--ps", "1", "--workers", "1", "--", "--model-dir", model_dir,
                                        "--device", "cuda", "--steps", "5"], env=env, capture_output=True, text=True,
                                       timeout=120)
                self.assertEqual(r.returncode, 2, r.stderr[-2000:])
                self.assertIn(f'{var}=\\"{value}\\"', r.stderr)

    def test_unreachable_parameter_servers_exit_138_after_the_retry_budget(self):
        env = dict(os.environ, TF_CONFIG='{"cluster":{"ps":["127.0.0.1:1"],"worker":["127.0.0.1:2"]},'
                                          '"task":{"type":"worker","index":0}}')
        r = subprocess.run([TRAINER, "--model", "toy", "--retry-seconds", "2"], env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 138, r.stderr[-500:])
        self.assertIn("unreachable past the retry budget", r.stderr)

    def test_tasks_with_different_ps_connections_exit_2_naming_the_flag(self):
        ports = free_ports(2)
        cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
        env = lambda task: dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": task}))
        ps = subprocess.Popen([TRAINER, "--model", "toy", "--ps-connections", "3"],
                              env=env({"type": "ps", "index": 0}), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            r = subprocess.run([TRAINER, "--model", "toy", "--retry-seconds", "20"], env=env({"type": "worker", "index": 0}),
                               capture_output=True, text=True, timeout=60)
        finally:
            ps.terminate()
            ps.wait(timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr[-800:])
        self.assertIn("has 3 partitions but this task uses 4", r.stderr)
        self.assertIn("--ps-connections", r.stderr)


class StopTest(unittest.TestCase):
    def test_a_chief_stopped_with_sigterm_checkpoints_what_the_servers_hold_then_exits_143(self):
        # What a Kueue eviction does to a job: the operator stops the chief first, the parameter
        # servers after it. Before, the chief exited at once and the job resumed from its last
        # periodic checkpoint (step 0 here: --checkpoint-steps is far away).
        ports = free_ports(2)
        cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "chief": [f"127.0.0.1:{ports[1]}"]}
        env = lambda task: dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": task}))
        model_dir = tempfile.mkdtemp(prefix="disttrain-model-")
        common = ["--model", "toy", "--model-dir", model_dir, "--metrics-address", "0"]
        ps = subprocess.Popen([TRAINER, *common], env=env({"type": "ps", "index": 0}),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        chief = subprocess.Popen([TRAINER, *common, "--steps", "100000000", "--checkpoint-steps", "100000000",
                                  "--log-every", "50"], env=env({"type": "chief", "index": 0}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            steps = []
            for line in chief.stdout:  # its step events: stop it once it trained a while
                if '"event":"step"' in line.replace(" ", ""):
                    steps.append(json.loads(line)["global_step"])
                    if steps[-1] >= 500:
                        break
            chief.send_signal(signal.SIGTERM)
            out, err = chief.communicate(timeout=60)
        finally:
            ps.terminate()
            ps.wait(timeout=30)
        self.assertEqual(chief.returncode, 143, err[-800:])
        saved = [json.loads(l)["global_step"] for l in out.splitlines() if '"event":"checkpoint"' in l.replace(" ", "")]
        self.assertTrue(saved, err[-800:])
        self.assertGreaterEqual(saved[-1], 500, "the checkpoint on SIGTERM holds the step it had reached")


class StartupOrderTest(unittest.TestCase):
    def initialised_after_listening(self, delay):
        """Starts a chief, then its ps `delay` seconds later; seconds from listening to initialised."""
        ports = free_ports(2)
        cluster = {"ps": [f"127.0.0.1:{ports[0]}"], "chief": [f"127.0.0.1:{ports[1]}"]}
        env = lambda task: dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": task}))
        model_dir = tempfile.mkdtemp(prefix="disttrain-model-")
        common = ["--model", "toy", "--model-dir", model_dir, "--metrics-address", "0"]
        chief = subprocess.Popen([TRAINER, *common, "--steps", "5", "--retry-seconds", "120"],
                                 env=env({"type": "chief", "index": 0}), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        ps = subprocess.Popen([TRAINER, *common], env=env({"type": "ps", "index": 0}),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, chief_err = chief.communicate(timeout=120)
        finally:
            ps.terminate()
            _, ps_err = ps.communicate(timeout=30)
        self.assertEqual(chief.returncode, 0, chief_err[-800:])
        self.assertIn("lost a parameter server; retrying", chief_err)

        def at(what):
            line = next(l for l in ps_err.splitlines() if what in l)
            return time.mktime(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S")) + float(line[19:23])

        waited = at("parameter server initialised") - at("parameter server listening")
        print(f"ps started {delay} s after the chief: initialised {waited:.2f} s after it listened")
        return waited

    def test_the_chief_tries_an_unreachable_parameter_server_at_least_once_a_second(self):
        # As in a cluster where the ps pod starts last: how soon the chief reaches it is set by
        # how often its channel tries again. A listener stands in for the ps and drops every
        # connection, so each attempt is seen without waiting for a late ps. With gRPC's default
        # reconnect backoff (1 s growing 1.6x to 120 s, jittered) a ps that started 30 s after the
        # chief was reached 3.1, 3.7, 4.1 and 17.3 s after it listened in four runs; the backoff
        # now ends at 1 s (jittered by 20%): no gap between attempts exceeds about 1.2 s (2 s allowed
        # for a loaded machine; the default gives 2.6 s and 4.1 s gaps within the 10 s).
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listener.settimeout(0.2)
        cluster = {"ps": [f"127.0.0.1:{listener.getsockname()[1]}"], "chief": [f"127.0.0.1:{free_ports(1)[0]}"]}
        env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}}))
        chief = subprocess.Popen([TRAINER, "--model", "toy", "--model-dir", tempfile.mkdtemp(prefix="disttrain-model-"),
                                  "--metrics-address", "0", "--steps", "5", "--retry-seconds", "120"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        attempts = []
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    conn, _ = listener.accept()
                except socket.timeout:
                    continue
                attempts.append(time.monotonic())
                conn.close()
        finally:
            chief.kill()
            chief.wait(timeout=30)
            listener.close()
        gaps = [b - a for a, b in zip(attempts, attempts[1:])]
        print(f"{len(attempts)} attempts in 10 s; longest gap {max(gaps, default=0):.2f} s")
        self.assertGreaterEqual(len(attempts), 8, "the chief kept trying the parameter server")
        self.assertLess(max(gaps), 2.0, f"gaps between attempts: {[round(g, 2) for g in gaps]}")

    def test_a_parameter_server_that_starts_1_s_after_the_chief_is_reached_at_once(self):
        # The pods of a job start together, the ps a moment late. gRPC noticed the completed
        # connect only when its backup poller ran, 5 s after the chief started: 4.0 s after the ps
        # listened in every run of the old code (0.05 s late: 4.97 s). Now 0.2-0.8 s.
        self.assertLess(self.initialised_after_listening(1), 2.5)


if __name__ == "__main__":
    unittest.main()
