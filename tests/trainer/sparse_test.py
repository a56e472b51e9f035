"""The recommendation models as real `disttrain-trainer` processes: DeepFM trains on MovieLens-100k
to its AUC bound, a parameter server killed mid-run comes back with its embedding rows and the
run still reaches the bound, a client this project did not write (Python grpcio on proto/) has
its broken and hostile sparse pushes refused with nothing applied, and the evaluator's AUC is the
one scikit-learn computes from the same model.

MovieLens is RecBole's copy in the tests' venv (tests/python/requirements-nodeps.txt). Runs in the
venv of tests/python/venv.sh."""
import importlib.util
import json
import os
import re
import struct
import subprocess
import tempfile
import time
import unittest

import grpc
import numpy as np
from sklearn.metrics import roc_auc_score

from ps_grpc_client_test import free_port, generate_stubs
from trainer_test import TRAINER, Run

pb, pb_grpc = generate_stubs()
ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
SCHEMA = os.path.join(ROOT, "examples", "movielens", "schema.yaml")
# 2,000 steps of 256 of DeepFM with two workers: the test AUC of 10 local runs was 0.772-0.781.
AUC_BOUND = 0.75
DEEPFM = ["--model", "deepfm", "--hidden", "64,32", "--schema", SCHEMA, "--mode", "downpour",
          "--local-steps", "1", "--learning-rate", "0.05", "--batch-size", "256", "--log-every", "0",
          "--metrics-address", "0"]


def movielens():
    spec = importlib.util.find_spec("recbole")
    return os.path.join(list(spec.submodule_search_locations)[0], "dataset_example", "ml-100k")


def mix64(x):
    """trainer/embedding/id_hash.h's Mix64."""
    m = (1 << 64) - 1
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & m
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & m
    return x ^ (x >> 31)


def id_of(text):
    """trainer/embedding/id_hash.h's IdOfString: FNV-1a, then mixed."""
    h = 0xcbf29ce484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001b3) & ((1 << 64) - 1)
    return mix64(h)


def ps_of(i, n):
    return mix64(i) % n


def read_tables(path):
    """{(table, id): row} from a table checkpoint (trainer/checkpoint/table_checkpoint.h)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"DTTBL001"
    pos, rows = 24, {}
    while data[pos] == 1:
        (name_len,) = struct.unpack_from("<I", data, pos + 1)
        name = data[pos + 5:pos + 5 + name_len].decode()
        pos += 5 + name_len
        row_floats, count = struct.unpack_from("<II", data, pos)
        pos += 8
        ids = struct.unpack_from(f"<{count}Q", data, pos)
        pos += 8 * count
        values = struct.unpack_from(f"<{count * row_floats}f", data, pos)
        pos += 4 * count * row_floats
        for i, id_ in enumerate(ids):
            rows[(name, id_)] = values[i * row_floats:(i + 1) * row_floats]
    return rows


def read_dense(path):
    """{variable: values} from a dense checkpoint (trainer/checkpoint/checkpoint.h)."""
    with open(path, "rb") as f:
        data = f.read()
    (count,) = struct.unpack_from("<I", data, 16)
    pos, out = 20, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        (size,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        out[name] = struct.unpack_from(f"<{size}f", data, pos)
        pos += 4 * size
    return out


class DeepFmOnMovieLensTest(unittest.TestCase):
    def test_two_workers_reach_the_auc_bound_and_report_it(self):
        run = Run(["--ps", "2", "--workers", "2", "--chief", "--evaluator"],
                  DEEPFM + ["--data-dir", movielens(), "--steps", "2000", "--checkpoint-steps", "500"])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-30:]))
        summary = run.summary()
        print(f"DeepFM, 2 ps, chief + 2 workers: {summary}", flush=True)
        self.assertTrue(summary["final_evaluated"])
        self.assertGreaterEqual(summary["auc"], AUC_BOUND)
        self.assertLess(summary["loss"], 0.65)
        evals = run.events("eval")
        self.assertLess(evals[0]["auc"], summary["auc"] - 0.1, "the first evaluation is of an untrained model")
        self.assertEqual(evals[-1]["examples"], 10000)

    def test_a_parameter_server_killed_mid_run_comes_back_with_its_rows(self):
        # From the table checkpoints: the chief keeps no copy (--ps-copy-seconds 0, and no
        # --ps-copy-tables: either alone would do).
        run = Run(["--ps", "2", "--workers", "1", "--chief", "--evaluator"],
                  DEEPFM + ["--data-dir", movielens(), "--steps", "2000", "--checkpoint-steps", "200",
                            "--full-checkpoint-every", "3", "--ps-copy-seconds", "0"])
        # Once two table checkpoints past the first (a full one, then a delta) are written, kill
        # ps 1. Asynchronous steps: the chief checkpoints at the multiples of 200 it sees.
        def table_saves():
            return [int(m.group(1)) for l in list(run.stderr)
                    if (m := re.search(r'"saved the embedding tables" global_step=(\d+)', l))]
        run.wait_for("a table checkpoint at step 400 or later", lambda: max(table_saves(), default=0) >= 400,
                     timeout=300)
        ps1 = [pid for pid, task in run.task_pids().items() if task == "ps-1"]
        os.kill(ps1[-1], 9)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-30:]))
        stderr = "".join(run.stderr)
        self.assertIn('"restored the embedding tables"', stderr)
        self.assertEqual(len([t for t in run.task_pids().values() if t == "ps-1"]), 2, "ps 1 ran twice")
        summary = run.summary()
        print(f"DeepFM with ps 1 killed at step 400+: {summary}", flush=True)
        self.assertGreaterEqual(summary["auc"], AUC_BOUND)

    def test_a_parameter_server_killed_mid_run_gets_its_rows_back_from_the_chiefs_copy(self):
        # No table checkpoint after step 0 (--checkpoint-steps 100000): before the chief's copy
        # kept the embedding rows, a killed ps came back from step 0's checkpoint, every row
        # trained since lost. Now its rows and the dense variables come from the copy, at most
        # about --ps-copy-seconds (0.5) old: after step S1 the chief had 2 s to copy.
        run = Run(["--ps", "2", "--workers", "1", "--chief", "--evaluator"],
                  DEEPFM + ["--data-dir", movielens(), "--steps", "2000", "--checkpoint-steps", "100000",
                            "--log-every", "10", "--ps-copy-tables"])

        def chief_step():
            return max((e["global_step"] for e in run.events("step") if e.get("task") == "chief-0"), default=0)
        s1 = run.wait_for("step 400", lambda: (s := chief_step()) >= 400 and s, timeout=300)
        time.sleep(2)
        s2 = chief_step()
        ps1 = [pid for pid, task in run.task_pids().items() if task == "ps-1"]
        os.kill(ps1[-1], 9)
        restore = run.wait_for("the restore", lambda: next(iter(run.events("restore")), None), timeout=60)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-30:]))
        self.assertEqual(restore["source"], "copy", restore)
        self.assertGreaterEqual(restore["global_step"], s1, "the copy is older than 2 s before the kill")
        self.assertLessEqual(restore["global_step"], s2 + 100)
        # MovieLens-100k's 943 users and 1,682 items alone are 2,625 ids of the user and item
        # tables; 400 steps of 256 read the whole training split.
        self.assertGreater(restore["table_rows"], 2625, restore)
        stderr = "".join(run.stderr)
        m = re.search(r'"restored the embedding tables from the chief\'s copy" rows=(\d+)', stderr)
        self.assertTrue(m, "the chief imported the copy's rows")
        self.assertEqual(int(m.group(1)), restore["table_rows"])
        self.assertNotIn('"restored the embedding tables" global_step', stderr, "no checkpoint restore")
        summary = run.summary()
        print(f"DeepFM with ps 1 killed at step >= {s2}: restored from the chief's copy at step "
              f"{restore['global_step']} with {restore['table_rows']} rows "
              f"(copy {restore['copy_age_seconds']:.2f} s old); {summary}", flush=True)
        self.assertGreaterEqual(summary["auc"], AUC_BOUND)


class AucTest(unittest.TestCase):
    def test_the_evaluators_auc_is_scikit_learns_on_the_same_model(self):
        # Logistic regression on a small file: the final checkpoint's rows and bias give every test
        # example's score, from which scikit-learn computes the AUC the evaluator must report.
        d = tempfile.mkdtemp(prefix="sparse-auc-")
        rng = np.random.default_rng(5)
        lines = ["user,item,clicked"]
        for _ in range(4000):
            u, i = int(rng.integers(0, 80)), int(rng.integers(0, 40))
            p = 1 / (1 + np.exp(-((u % 7) - 3) * 0.6 - ((i % 5) - 2) * 0.5))
            lines.append(f"u{u},i{i},{int(rng.random() < p)}")
        with open(os.path.join(d, "clicks.csv"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "schema.yaml"), "w") as f:
            f.write("files: [clicks.csv]\ntest_fraction: 0.25\nlabel: clicked\n"
                    "columns: [{name: user}, {name: item}]\nwide: {learning_rate: 0.1}\n")
        model_dir = os.path.join(d, "model")
        # The chief alone trains: no worker pushes after its final checkpoint, so the rows the
        # evaluator reads at the end are the checkpoint's.
        run = Run(["--ps", "2", "--workers", "0", "--chief", "--evaluator"],
                  ["--model", "lr", "--schema", os.path.join(d, "schema.yaml"), "--mode", "hogwild",
                   "--learning-rate", "0.05", "--batch-size", "64", "--steps", "600", "--checkpoint-steps",
                   "300", "--log-every", "0", "--metrics-address", "0"], model_dir=model_dir)
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-30:]))
        final = run.events("eval")[-1]
        step = final["global_step"]
        rows = {}
        tables = [f for f in os.listdir(model_dir) if f.startswith("tables-")]
        for f in sorted(tables, key=lambda f: int(f[len("tables-"):-len(".bin")])):
            rows.update(read_tables(os.path.join(model_dir, f)))  # the full one, then the deltas
        bias = read_dense(os.path.join(model_dir, f"ckpt-{step}.bin"))["bias"][0]
        # The test split: the records whose hash falls under the fraction (example_source.cc).
        scores, labels = [], []
        for r, line in enumerate(lines[1:], start=1):
            h = mix64(mix64(1) ^ mix64((0 << 40) ^ r))
            if (h >> 11) * (1.0 / 9007199254740992.0) >= 0.25:
                continue
            user, item, label = line.split(",")
            logit = bias + sum(rows.get((f"{t}/wide", id_of(v)), (0.0,))[0] for t, v in (("user", user), ("item", item)))
            scores.append(logit)
            labels.append(int(label))
        self.assertEqual(len(scores), final["examples"], "the same test split")
        want = roc_auc_score(labels, scores)
        print(f"evaluator AUC {final['auc']:.6f}, scikit-learn's {want:.6f} on {len(scores)} examples", flush=True)
        self.assertAlmostEqual(final["auc"], want, places=4)
        self.assertGreater(want, 0.6, "the model learned something")


class HostileSparsePushTest(unittest.TestCase):
    """One parameter server of two (it holds the ids Mix64(id) % 2 == 1), its tables declared and
    pushed to by grpcio."""

    @classmethod
    def setUpClass(cls):
        ports = [free_port(), free_port()]
        tf_config = {"cluster": {"ps": [f"127.0.0.1:{p}" for p in ports], "worker": [f"127.0.0.1:{free_port()}"]},
                     "task": {"type": "ps", "index": 1}}
        cls.log = tempfile.TemporaryFile()
        cls.proc = subprocess.Popen([TRAINER, "--model", "lr", "--schema", SCHEMA, "--metrics-address", "0"],
                                    env=dict(os.environ, TF_CONFIG=json.dumps(tf_config)),
                                    stdout=subprocess.DEVNULL, stderr=cls.log)
        cls.channel = grpc.insecure_channel(f"127.0.0.1:{ports[1]}")
        grpc.channel_ready_future(cls.channel).result(timeout=30)
        cls.stub = pb_grpc.ParameterServerStub(cls.channel)
        spec = pb.TableSpec(name="users", dim=2, optimizer="sgd", learning_rate=1.0, init_stddev=0.0)
        cls.stub.CreateTables(pb.CreateTablesRequest(tables=[spec]), timeout=10)
        cls.mine = [i for i in range(1, 50) if ps_of(i, 2) == 1][:3]
        cls.other = [i for i in range(1, 50) if ps_of(i, 2) == 0][0]

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.proc.terminate()
        cls.proc.wait(timeout=30)

    def rows(self):
        r = self.stub.SparsePushPull(pb.SparsePushPullRequest(
            pull=[pb.SparseRows(table="users", ids=self.mine)]), timeout=10)
        return struct.unpack(f"<{2 * len(self.mine)}f", r.rows[0].values)

    def push(self, table, ids, values):
        return self.stub.SparsePushPull(pb.SparsePushPullRequest(
            worker="worker-0", train=True,
            push=[pb.SparseRows(table=table, ids=ids, values=struct.pack(f"<{len(values)}f", *values))],
            pull=[pb.SparseRows(table="users", ids=self.mine)]), timeout=10)

    def test_a_good_push_applies_and_a_bad_one_applies_nothing(self):
        self.push("users", self.mine, [0.5] * 6)
        before = self.rows()
        self.assertEqual(before, tuple([-0.5] * 6))
        cases = [
            ("unknown table", "items", self.mine, [1.0] * 6, 'unknown table "items"'),
            ("wrong width", "users", self.mine, [1.0] * 5, "need 24 bytes of gradients, got 20"),
            ("NaN", "users", self.mine, [1.0, float("nan")] + [1.0] * 4, "is not finite (nan)"),
            ("another server's id", "users", self.mine[:2] + [self.other], [1.0] * 6,
             f"id {self.other} belongs to ps 0, not ps 1 of 2"),
        ]
        for what, table, ids, values, message in cases:
            with self.subTest(what):
                with self.assertRaises(grpc.RpcError) as e:
                    self.push(table, ids, values)
                self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn(message, e.exception.details())
                self.assertEqual(self.rows(), before, "nothing of the refused push was applied")


if __name__ == "__main__":
    unittest.main()
