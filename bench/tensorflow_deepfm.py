"""DeepFM on MovieLens-100k with TensorFlow's own ParameterServerStrategy: the TensorFlow side.

The TensorFlow baseline of the DeepFM benchmark. It trains the same click-through model on the
same train/test split as our disttrain-trainer, with stock TensorFlow 2 parameter-server training
(`tf.distribute.ParameterServerStrategy` + `tf.distribute.coordinator.ClusterCoordinator`):

  * cluster: --ps ps tasks and --workers worker tasks, each a `tf.distribute.Server` (grpc) in its
    own Python subprocess on a free loopback port; this process is the chief (the coordinator);
  * data: MovieLens-100k as shipped inside the `recbole` package (found without importing it);
    label = rating >= 4; 8 fields: user_id, item_id, age (bucketized at 18,25,35,45,50,56), gender,
    occupation, zip_code, release_year, class (the genres, multi-valued, mean-pooled); exact
    vocabularies built from the whole files; row r (1-based data line of ml-100k.inter) is a test
    row iff uniform(r) < 0.2 with the split hash below (the same rows as our runtime's split);
  * model: DeepFM = bias + first-order weights + FM second-order term over the 8 pooled 16-d field
    embeddings + MLP 128-64-32-1 (ReLU); sigmoid + binary cross-entropy; Adagrad (lr 0.05,
    initial accumulator 0.1, no epsilon) for every variable, applied on the ps tasks;
  * the embedding tables (all fields' vocabularies in one table, each field at its own offset,
    and the same for the first-order weights) are sharded over the ps tasks with
    FixedShardsPartitioner(num_shards=--ps); the small dense variables are placed whole, round-robin;
  * training: a per-worker tf.data pipeline (in-memory training split, shuffled, repeated, batches
    of 256); --steps steps in total are scheduled with `coordinator.schedule` and run
    asynchronously by the workers, then `coordinator.join()`.

Prints one JSON line on stdout (everything else goes to stderr):
  {"framework": "tensorflow", "ps", "workers", "steps", "batch_size", "train_seconds",
   "examples_per_second", "auc", "log_loss", "test_examples", "train_examples"}
train_seconds is the wall time from the first scheduled step to join() (start-up and evaluation
excluded); examples_per_second = steps * 256 / train_seconds; auc and log_loss (sklearn) are on the
test rows, evaluated on the coordinator after training.

Usage:  python bench/tensorflow_deepfm.py [--ps 2] [--workers 1] [--steps 2000] [--seed 1]
"""
import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback

import numpy as np

BATCH = 256
DIM = 16
AGE_BOUNDARIES = [18, 25, 35, 45, 50, 56]
SINGLE_FIELDS = ["user_id", "item_id", "age", "gender", "occupation", "zip_code", "release_year"]
LR, INITIAL_ACCUMULATOR = 0.05, 0.1
MASK64 = (1 << 64) - 1


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- data

def mix64(x):
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & MASK64
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & MASK64
    return x ^ (x >> 31)


def is_test_row(r, salt=mix64(1)):
    """Our runtime's split: row r (1-based) is a test row iff its hash-uniform is below 0.2."""
    return (mix64(salt ^ mix64(r)) >> 11) * (1.0 / 9007199254740992.0) < 0.2


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        header = [h.split(":")[0] for h in f.readline().rstrip("\n").split("\t")]
        return [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def load_movielens():
    """Returns (ids [n, 7 + max_genres] int64 into one combined table, -1 = no genre; labels [n]
    float32; is_test [n] bool; vocabulary size of the combined table)."""
    spec = importlib.util.find_spec("recbole")
    folder = os.path.join(list(spec.submodule_search_locations)[0], "dataset_example", "ml-100k")
    inter = read_tsv(os.path.join(folder, "ml-100k.inter"))
    users = {u["user_id"]: u for u in read_tsv(os.path.join(folder, "ml-100k.user"))}
    items = {i["item_id"]: i for i in read_tsv(os.path.join(folder, "ml-100k.item"))}
    for u in users.values():
        u["age"] = str(int(np.searchsorted(AGE_BOUNDARIES, int(u["age"]), side="right")))
    for i in items.values():
        i["genres"] = i["class"].split()

    # Exact per-field vocabularies from the whole files, laid out one after another.
    values = {f: [] for f in SINGLE_FIELDS + ["class"]}
    values["user_id"] = list(users)
    values["item_id"] = list(items)
    values["age"] = [str(b) for b in range(len(AGE_BOUNDARIES) + 1)]
    for f in ["gender", "occupation", "zip_code"]:
        values[f] = sorted({u[f] for u in users.values()})
    values["release_year"] = sorted({i["release_year"] for i in items.values()})
    values["class"] = sorted({g for i in items.values() for g in i["genres"]})
    index, offset = {}, 0
    for f, vals in values.items():
        index[f] = {v: offset + k for k, v in enumerate(vals)}
        offset += len(vals)
    max_genres = max(len(i["genres"]) for i in items.values())

    n = len(inter)
    ids = np.full((n, len(SINGLE_FIELDS) + max_genres), -1, np.int64)
    labels = np.zeros(n, np.float32)
    is_test = np.zeros(n, bool)
    for r, row in enumerate(inter):
        u, i = users[row["user_id"]], items[row["item_id"]]
        for k, f in enumerate(SINGLE_FIELDS):
            ids[r, k] = index[f][(u if f in u else i)[f]]
        for k, g in enumerate(i["genres"]):
            ids[r, len(SINGLE_FIELDS) + k] = index["class"][g]
        labels[r] = 1.0 if float(row["rating"]) >= 4 else 0.0
        is_test[r] = is_test_row(r + 1)
    return ids, labels, is_test, offset


# ---------------------------------------------------------------- cluster

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(cluster, job, index):
    """Body of a ps / worker subprocess: one grpc tf.distribute.Server until killed."""
    parent = os.getppid()

    def exit_with_parent():  # never outlive the chief, even if it is killed hard
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=exit_with_parent, daemon=True).start()
    import tensorflow as tf
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=index,
                                  protocol="grpc", start=True)
    server.join()


def start_cluster(num_ps, num_workers):
    cluster = {"chief": [f"127.0.0.1:{free_port()}"],
               "ps": [f"127.0.0.1:{free_port()}" for _ in range(num_ps)],
               "worker": [f"127.0.0.1:{free_port()}" for _ in range(num_workers)]}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    procs = []
    for job in ["ps", "worker"]:
        for k in range(len(cluster[job])):
            cmd = [sys.executable, os.path.abspath(__file__), "--serve", job, str(k),
                   "--cluster", json.dumps(cluster)]
            procs.append(subprocess.Popen(cmd, env=env, stdout=sys.stderr, stdin=subprocess.DEVNULL))
    return cluster, procs


def wait_for_ports(cluster, procs, timeout=120):
    deadline = time.time() + timeout
    for address in cluster["ps"] + cluster["worker"]:
        host, port = address.rsplit(":", 1)
        while True:
            if any(p.poll() is not None for p in procs):
                raise RuntimeError("a ps/worker subprocess exited during start-up")
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError(f"{address} did not start listening in {timeout}s")
                time.sleep(0.2)


# ---------------------------------------------------------------- model and training

def run(args, cluster):
    import tensorflow as tf
    from sklearn.metrics import log_loss, roc_auc_score

    ids, labels, is_test, vocab = load_movielens()
    rng = np.random.default_rng(args.seed)
    train = rng.permutation(np.flatnonzero(~is_test))  # shuffled training rows
    x_train, y_train = ids[train], labels[train]
    x_test, y_test = ids[is_test], labels[is_test]
    log(f"vocabulary {vocab}, train rows {len(train)}, test rows {len(y_test)}")

    class EmbeddingPartitioner:
        """FixedShardsPartitioner while creating the embedding tables; everything else whole."""
        def __init__(self, num_shards):
            self.fixed = tf.distribute.experimental.partitioners.FixedShardsPartitioner(num_shards)
            self.active = False

        def __call__(self, shape, dtype, axis=0):
            return self.fixed(shape, dtype, axis) if self.active else [1] * len(shape)

    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type="chief", task_id=0, rpc_layer="grpc")
    partitioner = EmbeddingPartitioner(args.ps)
    strategy = tf.distribute.ParameterServerStrategy(resolver, variable_partitioner=partitioner)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

    limit = 0.01 * np.sqrt(3.0)
    layers = [len(SINGLE_FIELDS) + 1, 64, 32, 1]  # fields, then the MLP widths
    with strategy.scope():
        partitioner.active = True
        emb = tf.Variable(rng.uniform(-limit, limit, (vocab, DIM)).astype(np.float32), name="emb")
        wide = tf.Variable(np.zeros((vocab, 1), np.float32), name="wide")
        partitioner.active = False
        dense = [tf.Variable(np.zeros([1], np.float32), name="bias")]
        fan_in = layers[0] * DIM
        for k, width in enumerate(layers[1:]):
            glorot = np.sqrt(6.0 / (fan_in + width))
            dense.append(tf.Variable(rng.uniform(-glorot, glorot, (fan_in, width)).astype(np.float32),
                                     name=f"mlp{k}_kernel"))
            dense.append(tf.Variable(np.zeros([width], np.float32), name=f"mlp{k}_bias"))
            fan_in = width
        # Trainable variables (the shards of the tables, then the dense ones), each with an
        # Adagrad accumulator on the same ps task.
        params = list(emb.variables) + list(wide.variables) + dense
        accumulators = []
        for v in params:
            with strategy.extended.colocate_vars_with(v):
                accumulators.append(tf.Variable(tf.fill(v.shape, INITIAL_ACCUMULATOR), trainable=False))
            assert accumulators[-1].device == v.device, (v.name, accumulators[-1].device)
    log("placement:", ", ".join(f"{v.name}{v.shape.as_list()}@{v.device.split('/')[3]}" for v in params))

    def forward(x, emb_table, wide_table, dense_params):
        """DeepFM logits for ids x [B, 7 + max_genres]; tables may be sharded variables."""
        single = len(SINGLE_FIELDS)
        mask = tf.cast(x[:, single:] >= 0, tf.float32)[:, :, None]  # [B, G, 1]
        count = tf.maximum(tf.reduce_sum(mask, axis=1), 1.0)        # [B, 1]
        safe = tf.maximum(x, 0)
        e = tf.nn.embedding_lookup(emb_table, safe)                  # [B, 7+G, D]
        w = tf.nn.embedding_lookup(wide_table, safe)                 # [B, 7+G, 1]
        fields = tf.concat([e[:, :single], (tf.reduce_sum(e[:, single:] * mask, 1) / count)[:, None]], 1)
        first = tf.reduce_sum(w[:, :single], [1, 2]) + tf.reduce_sum(w[:, single:] * mask, [1, 2]) / count[:, 0]
        s = tf.reduce_sum(fields, 1)                                 # [B, D]
        fm = 0.5 * tf.reduce_sum(s * s - tf.reduce_sum(fields * fields, 1), 1)
        h = tf.reshape(fields, [-1, layers[0] * DIM])
        for k in range(len(layers) - 1):
            h = tf.matmul(h, dense_params[1 + 2 * k]) + dense_params[2 + 2 * k]
            if k < len(layers) - 2:
                h = tf.nn.relu(h)
        return dense_params[0] + first + fm + h[:, 0]

    def dataset_fn():
        # No seed: each worker shuffles the training rows its own way, every pass.
        return (tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(y_train))
                .repeat().batch(BATCH, drop_remainder=True).prefetch(2))

    @tf.function
    def train_step(iterator):
        def replica_fn(x, y):
            with tf.GradientTape() as tape:
                logits = forward(x, emb, wide, dense)
                loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
            grads = tape.gradient(loss, params)
            for v, acc, g in zip(params, accumulators, grads):
                if isinstance(g, tf.IndexedSlices):  # embedding shards: sum duplicate rows first
                    rows, where = tf.unique(g.indices)
                    values = tf.math.unsorted_segment_sum(g.values, where, tf.shape(rows)[0])
                    tf.raw_ops.ResourceSparseApplyAdagradV2(
                        var=v.handle, accum=acc.handle, lr=LR, epsilon=0.0, grad=values, indices=rows)
                else:
                    tf.raw_ops.ResourceApplyAdagradV2(var=v.handle, accum=acc.handle, lr=LR,
                                                      epsilon=0.0, grad=g)
            return loss
        return strategy.run(replica_fn, args=next(iterator))

    per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))
    log(f"training {args.steps} steps on {args.workers} worker(s), {args.ps} ps")
    start = time.perf_counter()
    last = None
    for _ in range(args.steps):
        last = coordinator.schedule(train_step, args=(per_worker_iterator,))
    coordinator.join()
    train_seconds = time.perf_counter() - start
    log(f"trained in {train_seconds:.2f}s, last loss {float(last.fetch()):.4f}")

    # Evaluate on the coordinator with the trained values.
    values = [tf.convert_to_tensor(emb), tf.convert_to_tensor(wide)] + [tf.convert_to_tensor(v) for v in dense]
    logits = np.concatenate([forward(tf.constant(x_test[k:k + 8192]), *values[:2], values[2:]).numpy()
                             for k in range(0, len(x_test), 8192)])
    probs = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
    return {"framework": "tensorflow", "ps": args.ps, "workers": args.workers, "steps": args.steps,
            "batch_size": BATCH, "train_seconds": round(train_seconds, 3),
            "examples_per_second": round(args.steps * BATCH / train_seconds, 1),
            "auc": round(float(roc_auc_score(y_test, probs)), 5),
            "log_loss": round(float(log_loss(y_test, probs)), 5),
            "test_examples": int(len(y_test)), "train_examples": int(len(y_train))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ps", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", nargs=2, metavar=("JOB", "INDEX"), help=argparse.SUPPRESS)
    parser.add_argument("--cluster", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(json.loads(args.cluster), args.serve[0], int(args.serve[1]))
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    procs = []
    rc = 1
    try:
        cluster, procs = start_cluster(args.ps, args.workers)
        wait_for_ports(cluster, procs)
        result = run(args, cluster)
        print(json.dumps(result), flush=True)
        rc = 0
    except BaseException:
        traceback.print_exc()
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
        sys.stderr.flush()
        # The coordinator's background threads may still try to reach the killed tasks: leave now.
        os._exit(rc)


if __name__ == "__main__":
    main()
