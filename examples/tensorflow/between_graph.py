"""Real TensorFlow's between-graph parameter-server training (tf.compat.v1 graphs and sessions, the
style of Estimator and of TFJob's `enableDynamicWorker`), which takes workers that were not there
at start: each worker runs its own training loop, reading and updating the variables on the
parameter servers, so a worker scaled in (`kubectl scale`) trains as soon as it starts. Run it
with `spec.tfConfig.sparseWorkers: true`: each worker's TF_CONFIG names the parameter servers and
itself only, so no worker waits for (or is confused by) the others, and a new one needs nothing
from the ones already running. TF2's ParameterServerStrategy cannot do this (train.py): its
coordinator dispatches steps to the workers its TF_CONFIG listed when it started, and never
learns of another.

Roles (TF_CONFIG says which this process plays):
  ps      a tf.distribute.Server that holds the variables; blocks forever (the operator removes it
          when the job ends)
  worker  softmax regression on Fashion-MNIST, variables placed on the parameter servers by
          replica_device_setter; worker 0 is the chief (initializes the variables, checkpoints to
          --model-dir when given) and its success ends the job; every worker stops at --steps
          global steps

Output: JSON lines {"event": "step"|"done", "task", "global_step", "local_steps", "loss", ...}."""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

DATA = os.environ.get("FASHION_MNIST", "/usr/share/datasets/fashion-mnist")


def emit(**event):
    print(json.dumps(event), flush=True)


def cluster_spec(cluster):
    """A ClusterSpec from TF_CONFIG's cluster, dense (lists) or sparse ({"<index>": host})."""
    jobs = {}
    for name, tasks in cluster.items():
        if isinstance(tasks, dict):
            if tasks:
                jobs[name] = {int(i): host for i, host in tasks.items()}
        elif tasks:
            jobs[name] = list(tasks)
    return tf.train.ClusterSpec(jobs)


def read_idx(name, header, shape):
    import gzip
    with gzip.open(os.path.join(DATA, name)) as f:
        return np.frombuffer(f.read()[header:], dtype=np.uint8).reshape(shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="global steps to train (default 2000)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--log-every", type=int, default=100, help="local steps between step lines")
    parser.add_argument("--model-dir", default=None, help="worker 0's checkpoints (optional)")
    args = parser.parse_args()

    config = json.loads(os.environ["TF_CONFIG"])
    task_type, index = config["task"]["type"], int(config["task"]["index"])
    spec = cluster_spec(config["cluster"])
    server = tf.distribute.Server(spec, job_name=task_type, task_index=index, protocol="grpc")
    if task_type == "ps":
        emit(event="serving", task=f"ps-{index}", target=server.target)
        server.join()
        return
    if task_type != "worker":
        raise SystemExit(f"between_graph.py runs ps and worker tasks only, not {task_type!r}")

    tf.compat.v1.disable_eager_execution()
    images = read_idx("train-images-idx3-ubyte.gz", 16, (-1, 784)).astype(np.float32) / 255.0
    labels = read_idx("train-labels-idx1-ubyte.gz", 8, (-1,)).astype(np.int64)
    rng = np.random.default_rng(index)
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
            worker_device=f"/job:worker/task:{index}", cluster=spec)):
        global_step = tf.compat.v1.train.get_or_create_global_step()
        x = tf.compat.v1.placeholder(tf.float32, [None, 784])
        y = tf.compat.v1.placeholder(tf.int64, [None])
        w = tf.compat.v1.get_variable("weights", [784, 10], initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("bias", [10], initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(args.learning_rate).minimize(
            loss, global_step=global_step)
    # This worker talks to the parameter servers only (its sparse TF_CONFIG names no other
    # worker); the servers, whose TF_CONFIG names every worker that may come, receive from it.
    session_config = tf.compat.v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
    hooks = [tf.compat.v1.train.StopAtStepHook(last_step=args.steps)]
    task, local, started = f"worker-{index}", 0, time.monotonic()
    step = value = 0
    with tf.compat.v1.train.MonitoredTrainingSession(
            master=server.target, is_chief=index == 0, checkpoint_dir=args.model_dir if index == 0 else None,
            config=session_config, hooks=hooks, log_step_count_steps=None) as sess:
        while not sess.should_stop():
            batch = rng.integers(0, len(images), args.batch_size)
            _, step, value = sess.run([train_op, global_step, loss], {x: images[batch], y: labels[batch]})
            local += 1
            if local == 1 or local % args.log_every == 0:
                emit(event="step", task=task, global_step=int(step), local_steps=local, loss=float(value))
    # The final accuracy of the shared variables on a training sample, and the shared global step,
    # through a plain session. The step fetched with the last train_op can lag the shared one (the
    # read is not ordered after this worker's own increment, nor another worker's), so the done
    # line reads it again.
    with tf.compat.v1.Session(server.target, config=session_config) as sess:
        sample = rng.integers(0, len(images), 5000)
        acc, step = sess.run([accuracy, global_step], {x: images[sample], y: labels[sample]})
    emit(event="done", task=task, global_step=int(step), local_steps=local, loss=float(value),
         accuracy=float(acc), seconds=round(time.monotonic() - started, 1))


if __name__ == "__main__":
    main()
