#include "trainer/launcher/local_certificates.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/certificates.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/x509_chain.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int Mode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(LocalCertificatesTest, EveryTaskGetsItsOwnCertificateOfOneCaInAPrivateDirectory) {
  TfConfig cluster;
  cluster.cluster["ps"] = {"127.0.0.1:1", "127.0.0.1:2"};
  cluster.cluster["worker"] = {"127.0.0.1:3"};
  absl::StatusOr<std::string> base = WriteLocalCertificates(cluster);
  ASSERT_TRUE(base.ok()) << base.status();
  EXPECT_EQ(Mode(*base), 0700);
  const std::string ca = Read(LocalTlsDir(*base, "ps", 0) + "/ca.crt");
  for (const auto& [type, index] : {std::pair{"ps", 0}, {"ps", 1}, {"worker", 0}}) {
    const std::string dir = LocalTlsDir(*base, type, index);
    EXPECT_EQ(Read(dir + "/ca.crt"), ca) << dir;
    const std::string cert = Read(dir + "/tls.crt");
    EXPECT_EQ(testing::VerifyChain(ca, cert), X509_V_OK) << dir;
    EXPECT_THAT(*SubjectAltNames(cert), ElementsAre("IP:127.0.0.1", "DNS:localhost"));
    EXPECT_EQ(Mode(dir + "/tls.key"), 0600) << dir;
    EXPECT_NE(Read(dir + "/tls.key").find("PRIVATE KEY"), std::string::npos);
  }
  EXPECT_NE(Read(LocalTlsDir(*base, "ps", 0) + "/tls.crt"),
            Read(LocalTlsDir(*base, "ps", 1) + "/tls.crt"));
  EXPECT_FALSE(std::filesystem::exists(*base + "/ca.key")) << "the CA's key is not kept";
  std::filesystem::remove_all(*base);
}

}  // namespace
}  // namespace disttrain::trainer
