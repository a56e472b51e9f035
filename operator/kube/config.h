// Where the API server is and how to authenticate to it: from a kubeconfig file or from the
// pod's service account. TLS is always verified; there is no insecure mode.
#ifndef DISTTRAIN_OPERATOR_KUBE_CONFIG_H_
#define DISTTRAIN_OPERATOR_KUBE_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace disttrain::kube {

struct RestConfig {
  std::string server;           // "https://127.0.0.1:6443"
  std::string ca_pem;           // trusted CA bundle; empty uses the system's
  std::string client_cert_pem;  // client certificate authentication
  std::string client_key_pem;
  std::string bearer_token;    // token authentication
  std::string namespace_name;  // the context's or service account's namespace, if any
  std::string user_agent = "disttrain-operator";
  double qps = 100;
  int burst = 200;
  // Requests in flight at once across every thread (watches aside), hence the keep-alive
  // connections held; 0 leaves them unbounded (each caller bounds its own).
  int max_in_flight = 0;
  // A request (retries included) gives up after this long; one attempt after
  // min(attempt_timeout, what is left) without a byte from the server.
  absl::Duration request_timeout = absl::Seconds(30);
  absl::Duration attempt_timeout = absl::Seconds(10);
  // A watch that sends nothing for its server-side timeout plus this long is given up: the
  // connection is half-open (the server closes every watch at its timeoutSeconds, after a
  // bookmark).
  absl::Duration watch_idle_grace = absl::Seconds(5);
};

// Loads `path` (a kubeconfig) using `context`, or its current-context when empty. File
// references are read relative to the kubeconfig's folder. Errors say what is wrong and where.
absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context);

// The in-cluster config: KUBERNETES_SERVICE_HOST/PORT and the service account files under
// `sa_dir` (default /var/run/secrets/kubernetes.io/serviceaccount).
absl::StatusOr<RestConfig> InClusterConfig(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// --kubeconfig when set, else $KUBECONFIG, else in-cluster, else ~/.kube/config.
absl::StatusOr<RestConfig> LoadConfig(const std::string& kubeconfig_flag,
                                      const std::string& context);

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_CONFIG_H_
