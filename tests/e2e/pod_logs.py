"""Following what pods print, as a user does: `kubectl logs -f` of one pod and `kubectl dtr`
(the plugin, found by kubectl on PATH), each collected in the background."""
import os
import subprocess
import threading

from kube import KUBECONFIG, ROOT, TOOLS


class LogFollower:
    """`kubectl logs -f` of one pod, collected in the background."""

    def __init__(self, ns, pod):
        self.proc = subprocess.Popen([os.path.join(TOOLS, "kubectl"), "--kubeconfig", KUBECONFIG, "logs", "-f",
                                      "-n", ns, pod], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.thread = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self.thread.start()

    def text(self):
        return "".join(self.lines)

    def stop(self):
        self.proc.kill()
        self.thread.join(timeout=10)
        self.proc.stdout.close()
        self.proc.wait()


BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(ROOT, "build", "bin"))


def dtr(*args, timeout=60):
    """`kubectl dtr ...` found by kubectl on PATH, as a user installs the plugin."""
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", KUBECONFIG=KUBECONFIG)
    return subprocess.run([os.path.join(TOOLS, "kubectl"), "dtr", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


class DtrLogs:
    """`kubectl dtr logs JOB -f [ARGS]` in the background: every role's logs, merged."""

    def __init__(self, ns, job, *args):
        env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", KUBECONFIG=KUBECONFIG)
        self.proc = subprocess.Popen([os.path.join(TOOLS, "kubectl"), "dtr", "logs", job, "-f", "-n", ns, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines, self.errors = [], []
        self.threads = [threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True),
                        threading.Thread(target=lambda: self.errors.extend(self.proc.stderr), daemon=True)]
        for t in self.threads:
            t.start()

    def by_prefix(self):
        out = {}
        for line in list(self.lines):
            prefix, sep, text = line.partition(" | ")
            if sep:
                out.setdefault(prefix.strip(), []).append(text)
        return out

    def wait(self, timeout):
        code = self.proc.wait(timeout=timeout)
        for t in self.threads:
            t.join(timeout=10)
        return code

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.wait(30)
