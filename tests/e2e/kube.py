"""Helpers for end-to-end tests: kubectl against the local cluster, and waits on observed state.

Waits poll the API server for a condition a user could observe, with a deadline; they never
sleep a fixed time as a stand-in for synchronisation.
"""
import base64
import http.client
import json
import os
import re
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid

import yaml

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
KUBECONFIG = os.environ.get("DISTTRAIN_KUBECONFIG", os.path.join(ROOT, "build/cluster/kubeconfig"))
TOOLS = os.environ.get("DISTTRAIN_TOOLS", os.path.join(ROOT, "build/tools/bin"))
BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(ROOT, "build/bin"))
# The control plane this suite runs on: its lane (tests/cluster/lib.sh; empty: the default one, with
# the real node), the folder of its kubeconfig, and where this lane's suites write their logs, so
# that suites of different lanes running at once never share a file.
LANE = os.environ.get("DISTTRAIN_LANE", "")
CLUSTER_DIR = os.path.dirname(KUBECONFIG)
LOG_DIR = os.path.join(ROOT, "build", "e2e-logs" + (f"-{LANE}" if LANE else ""))


class KubectlError(Exception):
    def __init__(self, args, result):
        super().__init__(f"kubectl {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
        self.stderr = result.stderr
        self.returncode = result.returncode


def kubectl(*args, input=None, check=True, timeout=60, kubeconfig=None):
    """Runs kubectl with the cluster's kubeconfig (or another cluster's); returns the
    CompletedProcess."""
    cmd = [os.path.join(TOOLS, "kubectl"), "--kubeconfig", kubeconfig or KUBECONFIG, *args]
    result = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise KubectlError(args, result)
    return result


class _Reader:
    """`kubectl get ... -o json` answered over one kept-alive HTTPS connection per thread
    instead of a kubectl process per call: the suites poll the API server several times a
    second, and with lanes side by side (tests/CMakeLists.txt) starting a Go binary each time
    took about a core of the two. Resources are resolved by API discovery (names, singular
    names, short names), found again once when a name is unknown (a CRD installed since). What it
    cannot express is left to kubectl (get() returns None)."""

    def __init__(self, kubeconfig):
        with open(kubeconfig) as f:
            cfg = yaml.safe_load(f)
        current = cfg.get("current-context")
        ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == current)
        cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
        url = urllib.parse.urlparse(cluster["server"])
        self.host, self.port = url.hostname, url.port or 443
        self.ssl = ssl.create_default_context(cafile=self._file(cluster, "certificate-authority"))
        self.headers = {"Accept": "application/json"}
        if "token" in user:
            self.headers["Authorization"] = f"Bearer {user['token']}"
        if "client-certificate" in user or "client-certificate-data" in user:
            self.ssl.load_cert_chain(self._file(user, "client-certificate"), self._file(user, "client-key"))
        self.local = threading.local()
        self.resources = None
        self.lock = threading.Lock()

    @staticmethod
    def _file(section, key):
        if key in section:
            return section[key]
        f = tempfile.NamedTemporaryFile(delete=False, suffix=".pem")
        f.write(base64.b64decode(section[f"{key}-data"]))
        f.close()
        return f.name

    def _request(self, path):
        for attempt in range(2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ssl,
                                                                     timeout=60)
            try:
                conn.request("GET", path, headers=self.headers)
                r = conn.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _discover(self):
        found = {}
        def add(prefix, listing):
            for r in json.loads(listing).get("resources", []):
                if "/" in r["name"] or "get" not in r.get("verbs", []):
                    continue
                entry = (f"{prefix}/{{ns}}{r['name']}" if r["namespaced"] else f"{prefix}/{r['name']}",
                         r["namespaced"])
                for name in [r["name"], r.get("singularName") or r["kind"].lower(), r["kind"].lower(),
                             *r.get("shortNames", [])]:
                    found.setdefault(name, entry)
                group = prefix.split("/")[2] if prefix.startswith("/apis/") else ""
                if group:
                    found.setdefault(f"{r['name']}.{group}", entry)
        status, body = self._request("/api/v1")
        if status == 200:
            add("/api/v1", body)
        status, body = self._request("/apis")
        for g in json.loads(body).get("groups", []) if status == 200 else []:
            v = g["preferredVersion"]["groupVersion"]
            st, b = self._request(f"/apis/{v}")
            if st == 200:
                add(f"/apis/{v}", b)
        self.resources = found

    def _resolve(self, name):
        with self.lock:
            if self.resources is None or name not in self.resources:
                self._discover()
            return self.resources.get(name)

    def get(self, args):
        """The object or list `kubectl get ARGS -o json` prints, or None to let kubectl answer."""
        args = list(args)
        if not args or "/" in args[0]:
            return None
        resource, name, namespace, query, managed = args.pop(0), None, "default", {}, False
        while args:
            a = args.pop(0)
            if a in ("-n", "--namespace") and args:
                namespace = args.pop(0)
            elif a in ("-l", "--selector") and args:
                query["labelSelector"] = args.pop(0)
            elif a == "--field-selector" and args:
                query["fieldSelector"] = args.pop(0)
            elif a == "--show-managed-fields":
                managed = True
            elif not a.startswith("-") and name is None:
                name = a
            else:
                return None
        found = self._resolve(resource)
        if found is None:
            return None
        template, namespaced = found
        path = template.format(ns=f"namespaces/{namespace}/" if namespaced else "")
        if name:
            path += f"/{urllib.parse.quote(name)}"
        if query and not name:
            path += "?" + urllib.parse.urlencode(query)
        status, body = self._request(path)
        if status == 200:
            got = json.loads(body)
            if not name and got.get("kind", "").endswith("List"):
                # kubectl names each item's kind and version, as a single get would.
                kind, version = got["kind"][:-len("List")], got.get("apiVersion")
                got["items"] = [{"kind": kind, "apiVersion": version, **i} for i in got.get("items", [])]
            if not managed:  # kubectl leaves them out unless asked
                for o in got.get("items", [got]):
                    o.get("metadata", {}).pop("managedFields", None)
            return got
        reason = "NotFound" if status == 404 else json.loads(body).get("reason", str(status)) if body else str(status)
        message = json.loads(body).get("message", "") if body else ""
        raise KubectlError(["get", resource, *([name] if name else [])], subprocess.CompletedProcess(
            [], 1, "", f"Error from server ({reason}): {message}\n"))


_readers = {}
_readers_lock = threading.Lock()


def get_json(*args, kubeconfig=None):
    path = kubeconfig or KUBECONFIG
    key = (path, os.stat(path).st_mtime_ns)  # a control plane started again writes new credentials
    with _readers_lock:
        if key not in _readers:
            _readers[key] = _Reader(path)
        reader = _readers[key]
    got = reader.get(args)
    if got is not None:
        return got
    return json.loads(kubectl("get", *args, "-o", "json", kubeconfig=kubeconfig).stdout)


def ensure_tool(name):
    """Builds (or finds cached) a test tool that `make test` builds beside the suites
    (tests/cluster/tools/build-tools.sh: helm, toxiproxy), waiting for a build under way."""
    if os.path.exists(os.path.join(TOOLS, name if name != "toxiproxy" else "toxiproxy-server")):
        return
    out = subprocess.run([os.path.join(ROOT, "tests", "cluster", "tools", "build-tools.sh"), "--only", name],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise AssertionError(f"build-tools.sh --only {name} failed:\n{out.stderr[-2000:]}")


def https_client():
    """(server URL, SSL context with the kubeconfig's CA and client certificate) for raw API calls."""
    cfg = json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)
    cluster, user = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]
    ctx = ssl.create_default_context(cafile=cluster["certificate-authority"])
    ctx.load_cert_chain(user["client-certificate"], user["client-key"])
    return cluster["server"], ctx


def apply(manifest, namespace=None, kubeconfig=None, timeout=60):
    args = ["apply", "-f", "-"] + (["-n", namespace] if namespace else [])
    return kubectl(*args, input=manifest if isinstance(manifest, str) else json.dumps(manifest),
                   kubeconfig=kubeconfig, timeout=timeout)


def table_rows(text):
    """The rows of a `kubectl get` table as dicts, each cell cut at its header's column: cells may
    be empty (a printer column with no value) or hold spaces."""
    lines = text.splitlines()
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    rows = []
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line) + 1])]
        rows.append(dict(zip(names, cells)))
    return rows


def wait_until(what, predicate, timeout=60.0, interval=0.2):
    """Polls predicate() until it returns a truthy value, which is returned; fails after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except KubectlError as e:
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last seen: {last!r}")


def wait_established(crd, kubeconfig=None, timeout=60):
    """Waits for a CRD just applied to be Established. `kubectl wait` fails at once, instead of
    waiting, while the CRD has no status.conditions yet (seen on a fresh control plane under
    load), so each try is short and a failed one is repeated."""
    wait_until(f"{crd} to be established", lambda: kubectl(
        "wait", "--for=condition=Established", crd, "--timeout=5s", check=False,
        kubeconfig=kubeconfig).returncode == 0, timeout=timeout)


class Namespace:
    """A fresh namespace per test class, deleted afterwards (with everything in it)."""

    def __init__(self, prefix):
        self.name = f"{prefix}-{uuid.uuid4().hex[:6]}"

    def __enter__(self):
        kubectl("create", "namespace", self.name)
        # Pods are refused until kube-controller-manager has made the default service account.
        wait_until(f"namespace {self.name} to have its default service account",
                   lambda: kubectl("get", "serviceaccount", "default", "-n", self.name, check=False).returncode == 0,
                   timeout=30)
        return self.name

    def __exit__(self, *exc):
        kubectl("delete", "namespace", self.name, "--wait=false", check=False)


def job_events(namespace, name, kind="DistributedTraining"):
    """(reason, message) of each event of one object."""
    items = get_json("events", "-n", namespace, "--field-selector",
                     f"involvedObject.name={name},involvedObject.kind={kind}")["items"]
    return [(e["reason"], e["message"]) for e in items]


def wait_job_event(namespace, name, reason, count=1, timeout=30):
    """The object's events of `reason` once there are `count`. The operator posts events in the
    background after the write they tell of, so one read right after that write can come early."""
    def told():
        found = [(r, m) for r, m in job_events(namespace, name) if r == reason]
        return found if len(found) >= count else None
    return wait_until(f"{count} {reason} event(s) of {name}", told, timeout=timeout)
