"""spec.tls on the local cluster's real node (issue #36): mutual TLS between a job's trainer tasks.

The operator issues the job's CA and a certificate per task into a Secret the job owns; each pod mounts
only its own key and certificate with the CA. In a namespace enforcing Pod Security "restricted", with
read-only root filesystems, the job trains to the usual accuracy over TLS. From outside the job, a client
the project did not write (Python grpcio with stubs from proto/) dials the parameter server's pod:
plaintext, TLS without a client certificate, and a certificate of another CA (made by the `cryptography`
package) are refused; a certificate the job's CA issued (read from the Secret, as only an administrator
can) is served, so the refusals are the server's and not the network's. The Secret goes with the job.

Run as a script with the tests' venv (tests/python/run.sh): without a real node it exits 77, which
ctest reports as not run."""
import base64
import json
import os
import sys
import unittest

import grpc

import realnode
from crd_test import install_crd
from kube import ROOT, Namespace, apply, get_json, kubectl, wait_until
from operator_process import OperatorProcess

sys.path.insert(0, os.path.join(ROOT, "tests", "trainer"))
from ps_grpc_client_test import pb, pb_grpc  # noqa: E402  (stubs generated from proto/)
from tls_test import Authority, pem  # noqa: E402

OPERATOR = None
RESTRICTED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def setUpModule():
    global OPERATOR
    realnode.exit_unless_up()
    install_crd()
    OPERATOR = OperatorProcess("tls").start()


def tearDownModule():
    if OPERATOR is not None:
        OPERATOR.stop()


def trainer_role(replicas, args):
    container = {"name": "tensorflow", "image": realnode.TRAINER_IMAGE, "imagePullPolicy": "Never",
                 "args": ["--model=mlp", "--mode=sync", "--batch-size=64", "--learning-rate=0.1",
                          "--log-every=250", *args],
                 "securityContext": {**RESTRICTED, "readOnlyRootFilesystem": True},
                 "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}
    spec = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container], "volumes": [{"name": "tmp", "emptyDir": {}}]}
    return {"replicas": replicas, "restartPolicy": "OnFailure", "template": {"spec": realnode.on_real_node(spec)}}


class TlsRealNodeTest(unittest.TestCase):
    def setUp(self):
        self.context = Namespace("tls")
        self.ns = self.context.__enter__()
        kubectl("label", "namespace", self.ns, "pod-security.kubernetes.io/enforce=restricted")

    def tearDown(self):
        self.context.__exit__(None, None, None)

    def describe(self, ip, credentials, server_name, timeout=5):
        options = [("grpc.ssl_target_name_override", server_name)] if credentials is not None else []
        channel = (grpc.insecure_channel(f"{ip}:2222") if credentials is None
                   else grpc.secure_channel(f"{ip}:2222", credentials, options=options))
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout)
            return grpc.StatusCode.OK, pb_grpc.ParameterServerStub(channel).Describe(pb.DescribeRequest(),
                                                                                    timeout=timeout)
        except grpc.FutureTimeoutError:
            return grpc.StatusCode.UNAVAILABLE, None
        except grpc.RpcError as e:
            return e.code(), None
        finally:
            channel.close()

    def job(self, name, roles, run_policy=None):
        spec = {"tls": {"enabled": True}, "networkPolicy": {"enabled": False}, "replicaSpecs": roles}
        if run_policy:
            spec["runPolicy"] = run_policy
        apply({"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "metadata": {"name": name},
               "spec": spec}, self.ns)
        uid = get_json("dtr", name, "-n", self.ns)["metadata"]["uid"]
        return uid, f"{name}-tls-{uid[:8]}"

    def test_its_servers_answer_only_the_jobs_own_certificates(self):
        # Training for long: the server must be up for every refusal (a gone pod refuses too).
        uid, secret_name = self.job("sealed", {"PS": trainer_role(1, ["--steps=1000000"]),
                                               "Worker": trainer_role(2, ["--steps=1000000"])})
        secret = wait_until("the job's TLS Secret", lambda: get_json("secret", secret_name, "-n", self.ns), timeout=30)
        self.assertEqual(secret["metadata"]["ownerReferences"][0]["uid"], uid)
        self.assertEqual(sorted(secret["data"]), ["ca.crt", "ps-0.crt", "ps-0.key", "worker-0.crt", "worker-0.key",
                                                  "worker-1.crt", "worker-1.key"])
        data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
        ps = wait_until("ps 0 running", lambda: (p := get_json("pod", "sealed-ps-0", "-n", self.ns))["status"].get(
            "phase") == "Running" and p.get("status", {}).get("podIP") and p, timeout=180)
        # Each pod mounts the CA and its own certificate and key, no other task's.
        volume = next(v for v in ps["spec"]["volumes"] if v["name"] == "disttrain-tls")
        self.assertEqual([i["key"] for i in volume["secret"]["items"]], ["ca.crt", "ps-0.crt", "ps-0.key"])
        ip, server = ps["status"]["podIP"], f"sealed-ps-0.sealed.{self.ns}.svc"
        job_ca = data["ca.crt"]
        own = grpc.ssl_channel_credentials(job_ca, data["worker-1.key"], data["worker-1.crt"])

        def served():
            code, answer = wait_until("the job's own certificate to be served", lambda: (r := self.describe(
                ip, own, server))[0] == grpc.StatusCode.OK and r, timeout=60)
            return answer

        first = served()
        stranger = Authority("stranger")
        refused = {
            "plaintext": self.describe(ip, None, server)[0],
            "no client certificate": self.describe(ip, grpc.ssl_channel_credentials(job_ca), server)[0],
            "another CA's certificate": self.describe(ip, grpc.ssl_channel_credentials(
                job_ca, *stranger.issue("worker-0")), server)[0],
        }
        last = served()  # still up: the refusals were the server's
        print(f"outside clients: {refused}; with worker-1's certificate: steps {first.global_step} then "
              f"{last.global_step}")
        for what, code in refused.items():
            self.assertEqual(code, grpc.StatusCode.UNAVAILABLE, what)
        self.assertGreater(last.global_step, first.global_step, "the job trains over TLS meanwhile")

        kubectl("delete", "dtr", "sealed", "-n", self.ns)
        wait_until("the Secret to go with the job", lambda: kubectl(
            "get", "secret", secret_name, "-n", self.ns, check=False).returncode != 0, timeout=60)

    def test_a_job_with_tls_trains_to_the_usual_accuracy(self):
        # cleanPodPolicy None: the pods whose logs are read below outlive the chief's success (with
        # Running, cleanup may delete a worker, and its log, before it is read).
        self.job("trained", {"Chief": trainer_role(1, ["--steps=1500", "--checkpoint-steps=500"]),
                             "PS": trainer_role(1, ["--steps=1500"]),
                             "Worker": trainer_role(2, ["--steps=1500"])}, {"cleanPodPolicy": "None"})
        final = wait_until("the job to finish", lambda: (j := get_json("dtr", "trained", "-n", self.ns)).get(
            "status", {}).get("state") in ("Succeeded", "Failed") and j, timeout=600)
        self.assertEqual(final["status"]["state"], "Succeeded", json.dumps(final["status"])[:2000])
        print(f"result: {final['status']['result']}")
        self.assertGreaterEqual(final["status"]["result"]["trainAccuracy"], 0.84)
        for pod in ("trained-chief-0", "trained-ps-0", "trained-worker-1"):
            self.assertIn("tls=mutual", kubectl("logs", "-n", self.ns, pod, check=False).stdout, pod)
        kubectl("delete", "dtr", "trained", "-n", self.ns)  # its parameter server would keep serving


if __name__ == "__main__":
    unittest.main()
