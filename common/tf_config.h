// TF_CONFIG: the cluster description every task of a TensorFlow-style job reads from its
// environment. One definition with two uses: the operator writes it into pods, the trainer
// parses it to find its role and peers.
//
// The serialised form is byte-identical to what the Kubeflow TFJob operator writes:
//   {"cluster":{"chief":[...],"ps":[...],"worker":[...]},"task":{"type":"worker","index":1},
//    "environment":"cloud"}
// compact JSON, fields in that order, cluster keys sorted, role names lower-case.
// Value type; thread-compatible.
#ifndef DISTTRAIN_COMMON_TF_CONFIG_H_
#define DISTTRAIN_COMMON_TF_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace disttrain {

struct TfConfig {
  // Role name ("chief", "evaluator", "ps", "worker") -> "host:port" of each task, by index.
  std::map<std::string, std::vector<std::string>> cluster;
  std::string task_type;
  int task_index = 0;
  std::string environment = "cloud";

  bool operator==(const TfConfig&) const = default;
};

// The TF_CONFIG string for `config`, in the ecosystem's exact byte format.
std::string SerializeTfConfig(const TfConfig& config);

// Parses and checks a TF_CONFIG string: well-formed JSON, a known task type ("master" is read as
// "chief"), an index within the task's role, and the task's own address present in `cluster`
// (except for an evaluator, which the Estimator convention keeps out of `cluster`).
// Errors are InvalidArgument with a message naming the problem.
absl::StatusOr<TfConfig> ParseTfConfig(absl::string_view text);

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_TF_CONFIG_H_
