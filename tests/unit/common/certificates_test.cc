#include "common/certificates.h"

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/x509_chain.h"

namespace disttrain {
namespace {

using ::testing::ElementsAre;

using testing::VerifyChain;

class CertificatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<KeyAndCertificate> ca =
        MakeCertificateAuthority("job-a", now_ - kHour, now_ + kDay);
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
  }
  CertificateRequest Request(absl::Time from, absl::Time to) const {
    return {"job-a-ps-0", {"job-a-ps-0", "job-a-ps-0.team.svc", "127.0.0.1"}, from, to};
  }
  static constexpr absl::Duration kHour = absl::Hours(1);
  static constexpr absl::Duration kDay = absl::Hours(24);
  absl::Time now_ = absl::Now();
  KeyAndCertificate ca_;
};

TEST_F(CertificatesTest, AnIssuedCertificateVerifiesAgainstItsCaAndNamesItsTask) {
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(ca_, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  EXPECT_EQ(VerifyChain(ca_.certificate_pem, leaf->certificate_pem), X509_V_OK);
  EXPECT_THAT(*SubjectAltNames(leaf->certificate_pem),
              ElementsAre("DNS:job-a-ps-0", "DNS:job-a-ps-0.team.svc", "IP:127.0.0.1"));
  EXPECT_EQ(absl::ToUnixSeconds(*NotAfter(leaf->certificate_pem)),
            absl::ToUnixSeconds(now_ + kDay));
  EXPECT_NE(leaf->key_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
}

TEST_F(CertificatesTest, AnotherJobsCaDoesNotVerifyIt) {
  absl::StatusOr<KeyAndCertificate> other =
      MakeCertificateAuthority("job-b", now_ - kHour, now_ + kDay);
  ASSERT_TRUE(other.ok());
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(*other, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(VerifyChain(ca_.certificate_pem, leaf->certificate_pem),
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST_F(CertificatesTest, AnExpiredCertificateFailsVerification) {
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(ca_, Request(now_ - kDay, now_ - kHour));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(VerifyChain(ca_.certificate_pem, leaf->certificate_pem), X509_V_ERR_CERT_HAS_EXPIRED);
}

TEST_F(CertificatesTest, ALeafCannotSignFurtherCertificates) {
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(ca_, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(leaf.ok());
  absl::StatusOr<KeyAndCertificate> grandchild =
      IssueCertificate(*leaf, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(grandchild.ok());  // OpenSSL signs it, but no verifier accepts the chain
  EXPECT_NE(VerifyChain(ca_.certificate_pem, grandchild->certificate_pem), X509_V_OK);
}

TEST_F(CertificatesTest, BadInputIsRefused) {
  EXPECT_EQ(IssueCertificate({"junk", "junk"}, Request(now_, now_ + kDay)).status().code(),
            absl::StatusCode::kInvalidArgument);
  CertificateRequest nameless = Request(now_, now_ + kDay);
  nameless.names.clear();
  EXPECT_EQ(IssueCertificate(ca_, nameless).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(SubjectAltNames("not pem").ok());
}

}  // namespace
}  // namespace disttrain
