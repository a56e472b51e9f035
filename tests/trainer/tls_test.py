"""Mutual TLS between trainer tasks (--tls-dir, `disttrain-trainer local --tls`), checked with clients
and certificates the project did not make: Python grpcio with stubs from proto/, and certificates issued by
the `cryptography` package. A parameter server answers only a client whose certificate its job's CA signed
and that is valid now; a plaintext client, one without a certificate, one of another CA and one whose
certificate expired are all refused before any call reaches the server. A local cluster trains to the
usual accuracy over TLS.

Runs in the venv of tests/python/venv.sh."""
import datetime
import ipaddress
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ps_grpc_client_test import BIN, free_port, pb, pb_grpc
from trainer_test import Run

NOW = datetime.datetime.now(datetime.timezone.utc)
DAY = datetime.timedelta(days=1)


def pem(obj):
    if isinstance(obj, x509.Certificate):
        return obj.public_bytes(serialization.Encoding.PEM)
    return obj.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class Authority:
    def __init__(self, name):
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(NOW - DAY).not_valid_after(NOW + DAY)
                     .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                     .sign(self.key, hashes.SHA256()))

    def issue(self, name, not_before=NOW - DAY, not_after=NOW + DAY):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                .issuer_name(self.cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(not_before).not_valid_after(not_after)
                .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .sign(self.key, hashes.SHA256()))
        return pem(key), pem(cert)


class TlsParameterServer:
    """A real `disttrain-trainer` parameter server whose --tls-dir holds certificates of `ca`."""

    def __init__(self, ca):
        self.dir = tempfile.mkdtemp(prefix="tls-ps-")
        key, cert = ca.issue("ps-0")
        for name, data in (("ca.crt", pem(ca.cert)), ("tls.crt", cert), ("tls.key", key)):
            with open(os.path.join(self.dir, name), "wb") as f:
                f.write(data)
        self.port = free_port()
        tf_config = {"cluster": {"ps": [f"127.0.0.1:{self.port}"], "worker": [f"127.0.0.1:{free_port()}"]},
                     "task": {"type": "ps", "index": 0}}
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([os.path.join(BIN, "disttrain-trainer"), "--model", "toy", "--mode", "async",
                                      "--tls-dir", self.dir, "--metrics-address", "0"],
                                     env=dict(os.environ, TF_CONFIG=json.dumps(tf_config)),
                                     stdout=subprocess.DEVNULL, stderr=self.log)

    def stub(self, credentials):
        channel = (grpc.insecure_channel(f"127.0.0.1:{self.port}") if credentials is None
                   else grpc.secure_channel(f"127.0.0.1:{self.port}", credentials))
        return channel, pb_grpc.ParameterServerStub(channel)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.seek(0)
        log = self.log.read().decode()
        self.log.close()
        shutil.rmtree(self.dir)
        return log


class MutualTlsTest(unittest.TestCase):
    def setUp(self):
        self.job = Authority("job-a")
        self.ps = TlsParameterServer(self.job)
        self.addCleanup(self.ps.stop)

    def credentials(self, key_cert=None, root=None):
        key, cert = key_cert if key_cert else (None, None)
        return grpc.ssl_channel_credentials(root_certificates=pem(root or self.job.cert), private_key=key,
                                            certificate_chain=cert)

    def describe(self, credentials, timeout=15):
        channel, stub = self.ps.stub(credentials)
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout)
            return stub.Describe(pb.DescribeRequest(), timeout=timeout)
        finally:
            channel.close()

    def assert_refused(self, credentials, what):
        with self.assertRaises((grpc.RpcError, grpc.FutureTimeoutError), msg=what) as caught:
            self.describe(credentials, timeout=3)
        if isinstance(caught.exception, grpc.RpcError):
            self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAVAILABLE, what)

    def test_a_client_with_a_certificate_of_the_jobs_ca_is_served(self):
        answer = self.describe(self.credentials(self.job.issue("worker-0")))
        self.assertFalse(answer.initialized)
        self.assertEqual(answer.global_step, 0)

    def test_clients_without_a_valid_certificate_of_the_job_are_refused(self):
        stranger = Authority("job-b")
        self.assert_refused(None, "a plaintext client")
        self.assert_refused(self.credentials(), "a TLS client without a certificate")
        self.assert_refused(self.credentials(stranger.issue("worker-0")), "another CA's certificate")
        self.assert_refused(self.credentials(stranger.issue("worker-0"), root=stranger.cert),
                            "another CA's certificate, trusting only that CA")
        self.assert_refused(self.credentials(self.job.issue("worker-0", NOW - 2 * DAY, NOW - DAY)),
                            "an expired certificate of the job's CA")
        # The refusals were the server's: the job's own client is still served, and it finds the
        # server untouched.
        self.assertFalse(self.describe(self.credentials(self.job.issue("worker-0"))).initialized)

    def test_a_server_of_another_ca_is_not_trusted(self):
        impostor = Authority("impostor")
        with self.assertRaises((grpc.RpcError, grpc.FutureTimeoutError)):
            self.describe(self.credentials(self.job.issue("worker-0"), root=impostor.cert), timeout=3)


class LocalTlsTest(unittest.TestCase):
    def test_a_local_cluster_over_mutual_tls_trains_to_the_usual_accuracy(self):
        # The sync bound of trainer_test's FashionMnistTest (0.84 at 1,500 steps), every task talking TLS.
        run = Run(["--ps", "2", "--workers", "2", "--chief", "--evaluator", "--tls"],
                  ["--model", "mlp", "--hidden", "100", "--mode", "sync", "--steps", "1500",
                   "--learning-rate", "0.1", "--batch-size", "64", "--checkpoint-steps", "250",
                   "--log-every", "500"])
        self.assertEqual(run.wait(), 0, "".join(run.stderr[-20:]))
        s = run.summary()
        print(f"sync over mutual TLS: accuracy {s['accuracy']:.4f} in {s['seconds']:.1f} s")
        self.assertGreaterEqual(s["accuracy"], 0.84)
        self.assertEqual(s["global_step"], 1500)
        starts = [line for line in run.stderr if " info starting " in line]
        self.assertEqual(len(starts), 6, starts)  # 2 ps, chief, 2 workers, evaluator
        self.assertTrue(all("tls=mutual" in line for line in starts), starts[:2])
        tls_dir = next(line for line in run.stderr if "certificates in" in line).rsplit(" ", 1)[1].strip()
        self.assertFalse(os.path.exists(tls_dir), "the run's keys outlive it")


if __name__ == "__main__":
    unittest.main()
