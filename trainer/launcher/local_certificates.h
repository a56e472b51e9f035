// `disttrain-trainer local --tls`: a CA made for this run and one certificate per task, as the
// operator issues them for spec.tls, written where each task's --tls-dir reads them.
#ifndef DISTTRAIN_TRAINER_LAUNCHER_LOCAL_CERTIFICATES_H_
#define DISTTRAIN_TRAINER_LAUNCHER_LOCAL_CERTIFICATES_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/tf_config.h"

namespace disttrain::trainer {

// Creates a fresh directory under the temporary directory (mode 0700) holding, for every task
// of `cluster`, <type>-<index>/{ca.crt,tls.crt,tls.key} (the key 0600); each certificate names
// 127.0.0.1 and localhost and is valid for 30 days. Returns the directory.
absl::StatusOr<std::string> WriteLocalCertificates(const TfConfig& cluster);

// The --tls-dir of task `type` `index` under the directory WriteLocalCertificates made.
std::string LocalTlsDir(const std::string& base, const std::string& type, int index);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_LAUNCHER_LOCAL_CERTIFICATES_H_
