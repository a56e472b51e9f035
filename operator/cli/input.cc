#include "operator/cli/input.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace disttrain::cli {

absl::StatusOr<std::string> ReadInput(const std::string& path) {
  std::stringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
    buffer << in.rdbuf();
  }
  return buffer.str();
}

}  // namespace disttrain::cli
