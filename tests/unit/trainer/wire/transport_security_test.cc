// Mutual TLS between a real parameter server and the replicas' C++ client on loopback: a client
// with a certificate of the job's CA trains; one without a certificate, with another CA's or with
// an expired one is refused, and so is a server the client's CA did not sign.
#include "trainer/wire/transport_security.h"

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/certificates.h"
#include "gtest/gtest.h"
#include "trainer/ps/parameter_server.h"
#include "trainer/worker/ps_client.h"

namespace disttrain::trainer {
namespace {

constexpr absl::Duration kDay = absl::Hours(24);

KeyAndCertificate Ca(const std::string& name) {
  absl::StatusOr<KeyAndCertificate> ca =
      MakeCertificateAuthority(name, absl::Now() - kDay, absl::Now() + kDay);
  EXPECT_TRUE(ca.ok()) << ca.status();
  return *ca;
}

TlsMaterial Issue(const KeyAndCertificate& ca, const std::string& name, absl::Time from,
                  absl::Time to) {
  absl::StatusOr<KeyAndCertificate> c = IssueCertificate(ca, {name, {"127.0.0.1"}, from, to});
  EXPECT_TRUE(c.ok()) << c.status();
  return {ca.certificate_pem, c->certificate_pem, c->key_pem};
}

TlsMaterial Valid(const KeyAndCertificate& ca, const std::string& name) {
  return Issue(ca, name, absl::Now() - absl::Hours(1), absl::Now() + kDay);
}

class TransportSecurityTest : public ::testing::Test {
 protected:
  void Serve(const TlsMaterial& server) {
    UseTls(server);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", ServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override {
    service_.Close();
    if (server_) server_->Shutdown();
    UsePlaintext();
  }
  // InitAll from a client made with the credentials in force, tried `attempts` times 250 ms
  // apart (a first connection to a server just started can fail once, see ps_client_test.cc).
  absl::Status InitFromClient(int attempts = 12) {
    PsClient client({address_}, vars_, "w0", 1);
    absl::Status s;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      s = client.InitAll(params_, 3);
      if (s.code() != absl::StatusCode::kUnavailable) break;
      absl::SleepFor(absl::Milliseconds(250));
    }
    return s;
  }

  KeyAndCertificate job_ca_ = Ca("job-a");
  ParameterServer service_{[] { return MakeAsyncSgd(0.5f); }, 1, 1};
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::vector<VariableSpec> vars_ = {{"w", 2 * kChunkElements + 3}};
  Params params_ = {std::vector<float>(2 * kChunkElements + 3, 1.5f)};
};

TEST_F(TransportSecurityTest, AClientOfTheSameJobPushesAndPulls) {
  Serve(Valid(job_ca_, "ps-0"));
  UseTls(Valid(job_ca_, "worker-0"));
  ASSERT_TRUE(InitFromClient().ok());
  PsClient client({address_}, vars_, "w0", 1);
  Params pulled;
  absl::StatusOr<PsClient::StepResult> step = client.PushPull(&params_, {.step = 3}, &pulled);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->global_step, 4);
  EXPECT_FLOAT_EQ(pulled[0][7], 1.5f - 0.5f * 1.5f);
}

TEST_F(TransportSecurityTest, APlaintextClientIsRefused) {
  Serve(Valid(job_ca_, "ps-0"));
  UsePlaintext();
  EXPECT_EQ(InitFromClient(4).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(service_.store(0), nullptr);  // never initialised
}

TEST_F(TransportSecurityTest, AClientOfAnotherJobsCaIsRefused) {
  Serve(Valid(job_ca_, "ps-0"));
  const KeyAndCertificate other = Ca("job-b");
  // Its own CA as the root: it would accept the server, the server refuses it.
  TlsMaterial stranger = Valid(other, "worker-0");
  UseTls(stranger);
  EXPECT_EQ(InitFromClient(4).code(), absl::StatusCode::kUnavailable);
  // Even trusting the job's CA for the server, its own certificate is not the job's.
  stranger.ca_pem = job_ca_.certificate_pem;
  UseTls(stranger);
  EXPECT_EQ(InitFromClient(4).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(service_.store(0), nullptr);  // never initialised
}

TEST_F(TransportSecurityTest, AnExpiredClientCertificateOfTheJobIsRefused) {
  Serve(Valid(job_ca_, "ps-0"));
  UseTls(Issue(job_ca_, "worker-0", absl::Now() - kDay, absl::Now() - absl::Hours(1)));
  EXPECT_EQ(InitFromClient(4).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(service_.store(0), nullptr);  // never initialised
}

TEST_F(TransportSecurityTest, AServerOfAnotherCaIsNotTrusted) {
  Serve(Valid(Ca("impostor"), "ps-0"));
  UseTls(Valid(job_ca_, "worker-0"));
  EXPECT_EQ(InitFromClient(4).code(), absl::StatusCode::kUnavailable);
}

class LoadTlsDirTest : public ::testing::Test {
 protected:
  void Write(const TlsMaterial& m) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/ca.crt") << m.ca_pem;
    std::ofstream(dir_ + "/tls.crt") << m.certificate_pem;
    std::ofstream(dir_ + "/tls.key") << m.key_pem;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_ = testing::TempDir() + "/tls-" + std::to_string(getpid());
  KeyAndCertificate ca_ = Ca("job-a");
};

TEST_F(LoadTlsDirTest, ReadsTheThreeFiles) {
  const TlsMaterial m = Valid(ca_, "ps-0");
  Write(m);
  absl::StatusOr<TlsMaterial> loaded = LoadTlsDir(dir_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->certificate_pem, m.certificate_pem);
  EXPECT_EQ(loaded->key_pem, m.key_pem);
  EXPECT_EQ(loaded->ca_pem, m.ca_pem);
}

TEST_F(LoadTlsDirTest, NamesAMissingFileAndRefusesAnExpiredCertificate) {
  absl::StatusOr<TlsMaterial> missing = LoadTlsDir(dir_);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("ca.crt"), std::string::npos);
  Write(Issue(ca_, "ps-0", absl::Now() - kDay, absl::Now() - absl::Hours(1)));
  absl::StatusOr<TlsMaterial> expired = LoadTlsDir(dir_);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(expired.status().message().find("expired"), std::string::npos) << expired.status();
}

}  // namespace
}  // namespace disttrain::trainer
