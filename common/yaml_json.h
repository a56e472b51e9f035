// YAML <-> JSON for Kubernetes manifests: YAML documents in, nlohmann::json out, and JSON
// printed back as YAML that reads back to the same values (strings that look like numbers,
// booleans or null are quoted). Stateless; thread-safe.
#ifndef DISTTRAIN_COMMON_YAML_JSON_H_
#define DISTTRAIN_COMMON_YAML_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace disttrain {

// Parses every non-empty document of a YAML stream. Plain scalars follow the YAML 1.2 core
// schema (null, true/false, integers, floats); quoted scalars are strings.
absl::StatusOr<std::vector<nlohmann::json>> ParseYamlDocuments(absl::string_view text);

// One YAML document for `value` (no leading "---").
std::string ToYaml(const nlohmann::json& value);

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_YAML_JSON_H_
