// Mutual TLS between the tasks of a job (spec.tls; docs/trainer.md "Mutual TLS"). The task's
// directory holds ca.crt (the job's CA), tls.crt and tls.key (its own certificate, whose
// subjectAltNames are the task's Service names). Once UseTls has been called, every gRPC server
// of this process requires a client certificate signed by the job's CA, and every channel
// presents its own and checks that the server's is the job CA's and names the host dialled.
// Until then (no --tls-dir) both are plaintext. Thread-safe.
#ifndef DISTTRAIN_TRAINER_WIRE_TRANSPORT_SECURITY_H_
#define DISTTRAIN_TRAINER_WIRE_TRANSPORT_SECURITY_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace disttrain::trainer {

struct TlsMaterial {
  std::string ca_pem;
  std::string certificate_pem;
  std::string key_pem;
};

// Reads ca.crt, tls.crt and tls.key from `dir`. InvalidArgument naming the file that is missing,
// unreadable or not PEM, or saying that the certificate has expired or is not valid yet.
absl::StatusOr<TlsMaterial> LoadTlsDir(const std::string& dir);

// From now on, servers and channels of this process use mutual TLS with `material`.
void UseTls(TlsMaterial material);
// Back to plaintext (tests).
void UsePlaintext();

// What a server's listening port and a channel to a peer use: mutual TLS after UseTls, else
// plaintext.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials();
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials();

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WIRE_TRANSPORT_SECURITY_H_
