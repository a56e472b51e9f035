"""Real TensorFlow under the disttrain operator: TF2 ParameterServerStrategy on Fashion-MNIST.

One script for every role; TF_CONFIG (written by the operator) says which this process plays:
  chief      the coordinator: builds a Keras model under ParameterServerStrategy, trains it with
             model.fit (the steps run on the workers, the variables live on the parameter
             servers), writes a checkpoint per epoch, evaluates the final weights and exits 0
  ps, worker run a tf.distribute.Server and block in join() forever: the operator stops them
             when the chief is done (TensorFlow never does)
  evaluator  a sidecar evaluator: evaluates each checkpoint the chief writes, from --model-dir

Data: the IDX files of Debian's dataset-fashion-mnist, read by tf.data on each worker.
Output: JSON lines {"event": "eval"|"done", ...} on stdout, like disttrain-trainer's."""
import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402  (Keras 2: Keras 3 has no ParameterServerStrategy support)

DATA = "/usr/share/datasets/fashion-mnist"


def emit(**event):
    print(json.dumps(event), flush=True)


def idx_dataset(split):
    """(image, label) pairs from the gzip IDX files, parsed by tf.data (no Python in the loop)."""
    prefix = "train" if split == "train" else "t10k"
    images = tf.data.FixedLengthRecordDataset(os.path.join(DATA, f"{prefix}-images-idx3-ubyte.gz"), 784,
                                              header_bytes=16, compression_type="GZIP")
    labels = tf.data.FixedLengthRecordDataset(os.path.join(DATA, f"{prefix}-labels-idx1-ubyte.gz"), 1,
                                              header_bytes=8, compression_type="GZIP")
    images = images.map(lambda r: tf.cast(tf.io.decode_raw(r, tf.uint8), tf.float32) / 255.0)
    labels = labels.map(lambda r: tf.cast(tf.io.decode_raw(r, tf.uint8)[0], tf.int64))
    return tf.data.Dataset.zip((images, labels))


def build_model(hidden, steps_per_execution=1):
    model = keras.Sequential([keras.layers.Input((784,)), keras.layers.Dense(hidden, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], steps_per_execution=steps_per_execution)
    return model


def run_server(resolver):
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol=resolver.rpc_layer or "grpc", start=True)
    print(f"{resolver.task_type} {resolver.task_id} serving; blocking in join()", flush=True)
    server.join()


def run_chief(resolver, args):
    num_ps = len(resolver.cluster_spec().as_dict().get("ps", []))
    strategy = tf.distribute.ParameterServerStrategy(
        resolver, variable_partitioner=tf.distribute.experimental.partitioners.MinSizePartitioner(
            min_shard_bytes=64 << 10, max_shards=num_ps))
    with strategy.scope():
        model = build_model(args.hidden, steps_per_execution=10)  # fewer coordinator round trips

    def dataset_fn(context):
        batch = context.get_per_replica_batch_size(args.batch_size)
        ds = idx_dataset("train").shard(context.num_input_pipelines, context.input_pipeline_id)
        return ds.shuffle(10000).repeat().batch(batch).prefetch(2)

    os.makedirs(args.model_dir, exist_ok=True)
    checkpoint = keras.callbacks.ModelCheckpoint(os.path.join(args.model_dir, "ckpt-{epoch}"), save_weights_only=True)
    history = model.fit(keras.utils.experimental.DatasetCreator(dataset_fn), epochs=args.epochs,
                        steps_per_epoch=args.steps_per_epoch, callbacks=[checkpoint], verbose=2)
    # The final weights, from the last checkpoint (whole variables, however the parameter servers
    # sharded them), evaluated on the chief.
    local = build_model(args.hidden)
    local.load_weights(os.path.join(args.model_dir, f"ckpt-{args.epochs}")).expect_partial()
    loss, accuracy = local.evaluate(idx_dataset("test").batch(1000), verbose=0)
    emit(event="done", epochs=args.epochs, loss=float(loss), accuracy=float(accuracy),
         train_loss=float(history.history["loss"][-1]))


def run_evaluator(args):
    model = build_model(args.hidden)
    data = idx_dataset("test").batch(1000)

    class Report(keras.callbacks.Callback):
        def on_test_end(self, logs=None):
            emit(event="eval", accuracy=float(logs["accuracy"]), loss=float(logs["loss"]))

    keras.utils.SidecarEvaluator(model, data, checkpoint_dir=args.model_dir, max_evaluations=args.epochs,
                                 callbacks=[Report()]).start()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model-dir", default="/model", help="where the chief writes and the evaluator reads checkpoints")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    args = p.parse_args()
    if "TF_CONFIG" not in os.environ:
        print("TF_CONFIG is not set: run this under the disttrain operator", file=sys.stderr)
        return 2
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if resolver.task_type in ("ps", "worker"):
        run_server(resolver)
    elif resolver.task_type == "evaluator":
        run_evaluator(args)
    elif resolver.task_type == "chief":
        run_chief(resolver, args)
    else:
        print(f"unexpected task type {resolver.task_type!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
