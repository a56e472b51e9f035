"""Push+pull through TensorFlow's own gRPC parameter server against disttrain's, side by side.

TensorFlow (tensorflow-cpu from PyPI, the venv of tests/python/venv.sh): a `tf.distribute.Server`
ps task and a worker task, each its own process on loopback; one variable of the model's size on
the ps. A step is what a worker does with a parameter server: pull (copy the ps variable to the
worker) and push (`assign_add` of a gradient that lives on the worker), in one tf.function, so
TensorFlow may overlap the two directions as it likes.

disttrain: `trainer_bench --only transport` (a disttrain-trainer ps process, one PushPull per
step) for the same sizes, interleaved with the TensorFlow runs so both see the same machine.

Also from trainer_bench, measured in the same run: raw TCP loopback (one and two connections) and
a raw push+pull (the same step over raw sockets with no framework, data received into and sent
from model-sized buffers, the gradient applied once whole: the physical limit of any parameter
server on this machine); "raw / TensorFlow" is the most any implementation could gain here.

GB/s = 2 x model / step time; medians of --reps steps after a warm-up. Prints one JSON line per
size and a Markdown table. Usage (what `make bench-tf` runs):
  python bench/compare_tensorflow.py --trainer-bench build/release/bin/trainer_bench
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster(ps_port, worker_port):
    return {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{worker_port}"]}


def serve_ps(ps_port, worker_port):
    import tensorflow as tf
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster(ps_port, worker_port)), job_name="ps",
                                  task_index=0, protocol="grpc", start=True)
    server.join()


def tf_worker(ps_port, worker_port, mib, reps):
    import tensorflow as tf
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster(ps_port, worker_port)), task_type="worker", task_id=0, rpc_layer="grpc")
    tf.config.experimental_connect_to_cluster(resolver, job_name="worker", task_index=0,
                                              make_master_device_default=False)
    ps, worker = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"
    n = mib * (1 << 20) // 4
    with tf.device(ps):
        v = tf.Variable(tf.zeros([n], tf.float32))
    with tf.device(worker):
        g = tf.fill([n], tf.constant(1e-6, tf.float32))

    @tf.function
    def step():
        with tf.device(worker):
            pulled = tf.identity(v.read_value())  # pull: the ps variable copied to the worker
        with tf.device(ps):
            v.assign_add(g)  # push: the worker's gradient sent to the ps and applied there
        with tf.device(worker):
            return pulled[n - 1]

    step().numpy()  # warm-up: graph building, connections
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step().numpy()
        times.append(time.perf_counter() - start)
    return 2 * mib * (1 << 20) / statistics.median(times)


def run_tensorflow(mib, reps):
    ps_port, worker_port = free_port(), free_port()
    me = os.path.abspath(__file__)
    ps = subprocess.Popen([sys.executable, me, "--serve-ps", str(ps_port), str(worker_port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        out = subprocess.run([sys.executable, me, "--tf-worker", str(ps_port), str(worker_port), str(mib), str(reps)],
                             capture_output=True, text=True, timeout=900)
        if out.returncode != 0:
            raise RuntimeError(f"TensorFlow worker failed:\n{out.stderr[-3000:]}")
        return float(out.stdout.strip().splitlines()[-1])
    finally:
        ps.kill()
        ps.wait()


def run_disttrain(trainer_bench, mib):
    out = subprocess.run([trainer_bench, "--only", "transport", "--sizes", str(mib)], capture_output=True,
                         text=True, timeout=900, check=True)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            return (r["push_pull_gb_per_s"] * 1e9, r["tcp_loopback_gb_per_s"] * 1e9,
                    r["tcp_two_connections_gb_per_s"] * 1e9, r["raw_push_pull_gb_per_s"] * 1e9)
    raise RuntimeError(f"no result from {trainer_bench}:\n{out.stderr[-2000:]}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-ps":
        serve_ps(int(sys.argv[2]), int(sys.argv[3]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--tf-worker":
        print(tf_worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trainer-bench", default="build/release/bin/trainer_bench")
    p.add_argument("--sizes", default="1,16,64,256")
    p.add_argument("--runs", type=int, default=3, help="alternating runs of each side per size (medians)")
    p.add_argument("--reps", type=int, default=7, help="TensorFlow steps per run")
    args = p.parse_args()
    rows = []
    for mib in [int(s) for s in args.sizes.split(",")]:
        tf_rates, ours, tcp, tcp2, raw = [], [], [], [], []
        for _ in range(args.runs):
            tf_rates.append(run_tensorflow(mib, args.reps))
            d, t, t2, rw = run_disttrain(args.trainer_bench, mib)
            ours.append(d)
            tcp.append(t)
            tcp2.append(t2)
            raw.append(rw)
        row = {"bench": "ps_vs_tensorflow", "model_mib": mib, "runs": args.runs,
               "tensorflow_gb_per_s": statistics.median(tf_rates) / 1e9,
               "disttrain_gb_per_s": statistics.median(ours) / 1e9,
               "tcp_loopback_gb_per_s": statistics.median(tcp) / 1e9,
               "tcp_two_connections_gb_per_s": statistics.median(tcp2) / 1e9,
               "raw_push_pull_gb_per_s": statistics.median(raw) / 1e9,
               "tensorflow_runs_gb_per_s": [round(x / 1e9, 3) for x in tf_rates],
               "disttrain_runs_gb_per_s": [round(x / 1e9, 3) for x in ours]}
        row["ratio_vs_tensorflow"] = row["disttrain_gb_per_s"] / row["tensorflow_gb_per_s"]
        row["disttrain_ratio_vs_tcp"] = row["disttrain_gb_per_s"] / row["tcp_loopback_gb_per_s"]
        row["tensorflow_ratio_vs_tcp"] = row["tensorflow_gb_per_s"] / row["tcp_loopback_gb_per_s"]
        row["disttrain_ratio_vs_raw"] = row["disttrain_gb_per_s"] / row["raw_push_pull_gb_per_s"]
        row["raw_ratio_vs_tensorflow"] = row["raw_push_pull_gb_per_s"] / row["tensorflow_gb_per_s"]
        print(json.dumps(row), flush=True)
        rows.append(row)
    print("\n| model | TensorFlow GB/s | disttrain GB/s | disttrain / TensorFlow | TCP loopback GB/s | disttrain / TCP "
          "| TensorFlow / TCP | TCP, 2 connections GB/s | raw push+pull GB/s | disttrain / raw | raw / TensorFlow |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model_mib']} MiB | {r['tensorflow_gb_per_s']:.2f} | {r['disttrain_gb_per_s']:.2f} | "
              f"{r['ratio_vs_tensorflow']:.2f}x | {r['tcp_loopback_gb_per_s']:.2f} | {r['disttrain_ratio_vs_tcp']:.2f} | "
              f"{r['tensorflow_ratio_vs_tcp']:.2f} | {r['tcp_two_connections_gb_per_s']:.2f} | "
              f"{r['raw_push_pull_gb_per_s']:.2f} | {r['disttrain_ratio_vs_raw']:.2f} | {r['raw_ratio_vs_tensorflow']:.2f}x |")


if __name__ == "__main__":
    main()
