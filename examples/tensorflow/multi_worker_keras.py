"""A Kubeflow TFJob example converted to disttrain: Keras MultiWorkerMirroredStrategy on two workers.

The shape of kubeflow/training-operator's examples/tensorflow/distribution_strategy/keras-API (a
TFJob of two Workers running one Keras script): every worker runs this same script; TF_CONFIG
(written by the operator) makes them one collective all-reduce group, worker 0 is the chief. As
most Keras scripts do, it logs through `tf.keras.callbacks.TensorBoard` and checkpoints through
`ModelCheckpoint`; worker 0 writes to --log-dir and --checkpoint-dir, the others to scratch
directories (Keras' multi-worker convention), then worker 0 saves the trained model.

Adapted to the local cluster: Fashion-MNIST from Debian's IDX files instead of a download, and
shorter training. Output: JSON lines {"event": "done", ...} on stdout, like disttrain-trainer's."""
import argparse
import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# tf.keras as the example was written for it: Keras 2 (tf_keras, in the image). Keras 3's model.fit
# under MultiWorkerMirroredStrategy fails on TF 2.21 ("Attempt to convert a value (PerReplica...)").
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow as tf  # noqa: E402
from disttrain_progress import ProgressMetrics  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"


def sharded_by_data(ds):
    """One IDX file cannot be split by file across workers: each worker takes every n-th batch."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.with_options(options)


def idx_dataset(prefix):
    images = tf.data.FixedLengthRecordDataset(os.path.join(DATA, f"{prefix}-images-idx3-ubyte.gz"), 784,
                                              header_bytes=16, compression_type="GZIP")
    labels = tf.data.FixedLengthRecordDataset(os.path.join(DATA, f"{prefix}-labels-idx1-ubyte.gz"), 1,
                                              header_bytes=8, compression_type="GZIP")
    images = images.map(lambda r: tf.reshape(tf.cast(tf.io.decode_raw(r, tf.uint8), tf.float32) / 255.0, (28, 28, 1)))
    labels = labels.map(lambda r: tf.cast(tf.io.decode_raw(r, tf.uint8)[0], tf.int64))
    return tf.data.Dataset.zip((images, labels))


def build_and_compile_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def own_dir(path, is_chief):
    """The chief writes where it is told; other workers write beside it (Keras' multi-worker convention)."""
    if not is_chief:
        return tempfile.mkdtemp(prefix="worker-")
    os.makedirs(path, exist_ok=True)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log-dir", default="/train/logs", help="TensorBoard event files (worker 0's)")
    p.add_argument("--checkpoint-dir", default="/train/checkpoint")
    p.add_argument("--saved-model-dir", default="/train/saved_model")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=64, help="per worker")
    args = p.parse_args()
    if "TF_CONFIG" not in os.environ:
        print("TF_CONFIG is not set: run this under the disttrain operator", file=sys.stderr)
        return 2
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    is_chief = resolver.task_type in (None, "chief") or (resolver.task_type == "worker" and resolver.task_id == 0)
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    train = sharded_by_data(idx_dataset("train").shuffle(10000, seed=1).repeat().batch(global_batch))
    with strategy.scope():
        model = build_and_compile_model()
    callbacks = [
        tf.keras.callbacks.TensorBoard(log_dir=own_dir(args.log_dir, is_chief), update_freq="epoch"),
        tf.keras.callbacks.ModelCheckpoint(
            os.path.join(own_dir(args.checkpoint_dir, is_chief), "ckpt-{epoch}.weights.h5"), save_weights_only=True),
        # status.progress and the Progress and ETA columns of `kubectl get dtr -o wide`: worker 0 serves
        # /metrics as disttrain-trainer does (disttrain_progress.py).
        ProgressMetrics(examples_per_step=global_batch, serve=is_chief),
    ]
    history = model.fit(train, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, callbacks=callbacks,
                        verbose=2)
    model.save(os.path.join(own_dir(args.saved_model_dir, is_chief), "model.keras"))
    loss, accuracy = model.evaluate(sharded_by_data(idx_dataset("t10k").batch(1000)), verbose=0)
    print(json.dumps({"event": "done", "task": f"{resolver.task_type}-{resolver.task_id}", "epochs": args.epochs,
                      "loss": float(loss), "accuracy": float(accuracy),
                      "train_loss": float(history.history["loss"][-1])}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
