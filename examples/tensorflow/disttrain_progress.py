"""Tell the disttrain operator how far a Keras training is, as disttrain-trainer does.

The operator reads a running job's progress (status.progress: the step, percent, steps and
examples per second, the estimated completion time; the Progress and ETA columns of
`kubectl get dtr -o wide`) from the /metrics page of its chief, or of worker 0 when the job has no
chief, on the main container's port named "metrics" (9095 when none is). Any image that serves
these three gauges there gets the same (docs/user-guide.md#progress):

    disttrain_trainer_global_step               the step training is at
    disttrain_trainer_target_steps              the step it stops at (0 or absent: unknown)
    disttrain_trainer_examples_per_global_step  examples one step stands for (optional)

Use: `model.fit(..., callbacks=[ProgressMetrics()])` in the task that reports (the others may
pass it too: it serves only where `serve` is true). Standard library only; Keras >= 2.
"""
import http.server
import threading

import tensorflow as tf


class ProgressMetrics(tf.keras.callbacks.Callback):
    def __init__(self, port=9095, examples_per_step=None, serve=True):
        super().__init__()
        self.port = port
        self.examples_per_step = examples_per_step
        self.serve = serve
        self.step = 0
        self.target = 0
        self._server = None

    def page(self):
        lines = ["# TYPE disttrain_trainer_global_step gauge", f"disttrain_trainer_global_step {self.step}",
                 "# TYPE disttrain_trainer_target_steps gauge", f"disttrain_trainer_target_steps {self.target}"]
        if self.examples_per_step:
            lines += ["# TYPE disttrain_trainer_examples_per_global_step gauge",
                      f"disttrain_trainer_examples_per_global_step {self.examples_per_step}"]
        return ("\n".join(lines) + "\n").encode()

    def on_train_begin(self, logs=None):
        steps, epochs = self.params.get("steps"), self.params.get("epochs")
        self.step = int(self.model.optimizer.iterations.numpy())
        if steps and epochs:
            self.target = self.step + steps * epochs
        if self.serve and self._server is None:
            callback = self

            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    if self.path != "/metrics":
                        self.send_error(404)
                        return
                    body = callback.page()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; version=0.0.4")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

                def log_message(self, *args):  # no line per scrape in the training log
                    pass

            self._server = http.server.ThreadingHTTPServer(("", self.port), Handler)
            threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
