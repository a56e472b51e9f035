// X.509 material for mutual TLS between the tasks of one job: a certificate authority made for
// the job alone and one certificate per task, all ECDSA P-256, PEM-encoded. The operator issues
// them when it creates a job (spec.tls) and `disttrain-trainer local --tls` for a local cluster;
// the CA's private key is used to sign and then dropped, so no one can issue another certificate
// of the job later. Thread-safe (each call owns its OpenSSL objects).
#ifndef DISTTRAIN_COMMON_CERTIFICATES_H_
#define DISTTRAIN_COMMON_CERTIFICATES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace disttrain {

struct KeyAndCertificate {
  std::string key_pem;          // PKCS#8 private key
  std::string certificate_pem;  // X.509 v3 certificate
};

struct CertificateRequest {
  std::string common_name;
  // subjectAltName entries: DNS names, and IP addresses where an entry parses as one.
  std::vector<std::string> names;
  absl::Time not_before;
  absl::Time not_after;
};

// A self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign) named `common_name`.
absl::StatusOr<KeyAndCertificate> MakeCertificateAuthority(absl::string_view common_name,
                                                           absl::Time not_before,
                                                           absl::Time not_after);

// A leaf certificate signed by `ca`, for both TLS servers and clients (extendedKeyUsage
// serverAuth, clientAuth). InvalidArgument when `ca` does not parse or `request` has no name.
absl::StatusOr<KeyAndCertificate> IssueCertificate(const KeyAndCertificate& ca,
                                                   const CertificateRequest& request);

// The subjectAltName entries of a PEM certificate ("DNS:x", "IP:1.2.3.4"), for tests and logs.
absl::StatusOr<std::vector<std::string>> SubjectAltNames(absl::string_view certificate_pem);

// When a PEM certificate stops being valid.
absl::StatusOr<absl::Time> NotAfter(absl::string_view certificate_pem);

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_CERTIFICATES_H_
