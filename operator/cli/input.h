// Reading the manifest a CLI command is given: a file, or standard input for "-".
#ifndef DISTTRAIN_OPERATOR_CLI_INPUT_H_
#define DISTTRAIN_OPERATOR_CLI_INPUT_H_

#include <string>

#include "absl/status/statusor.h"

namespace disttrain::cli {

// The whole text of `path` ("-" reads stdin); NotFound names a file that cannot be opened.
absl::StatusOr<std::string> ReadInput(const std::string& path);

}  // namespace disttrain::cli

#endif  // DISTTRAIN_OPERATOR_CLI_INPUT_H_
