#include "operator/queueing/topology.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_members.h"

namespace disttrain::queueing {

using nlohmann::json;

absl::StatusOr<std::optional<json>> TopologyRequest(const json& pod, int32_t count,
                                                    const std::string& index_label) {
  const json& annotations = ObjectMember(ObjectMember(pod, "metadata"), "annotations");
  auto get = [&](const char* key) -> std::optional<std::string> {
    auto it = annotations.find(key);
    if (it == annotations.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const std::optional<std::string> required = get(kRequiredTopology),
                                   preferred = get(kPreferredTopology),
                                   unconstrained = get(kUnconstrainedTopology),
                                   group = get(kPodSetGroupName),
                                   slice = get(kSliceRequiredTopology), size = get(kSliceSize);
  auto invalid = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("pod template annotation ", what));
  };
  if (int(required.has_value()) + int(preferred.has_value()) + int(unconstrained.has_value()) > 1) {
    return invalid(absl::StrCat("topology: at most one of ", kRequiredTopology, ", ",
                                kPreferredTopology, " and ", kUnconstrainedTopology));
  }
  if (unconstrained && *unconstrained != "true" && *unconstrained != "false") {
    return invalid(absl::StrCat(kUnconstrainedTopology, ": must be \"true\" or \"false\", got \"",
                                *unconstrained, "\""));
  }
  if (slice.has_value() != size.has_value()) {
    return invalid(
        absl::StrCat(kSliceRequiredTopology, " and ", kSliceSize, ": set both or neither"));
  }
  int32_t slice_size = 0;
  if (size && (!absl::SimpleAtoi(*size, &slice_size) || slice_size < 1 || slice_size > count)) {
    return invalid(absl::StrCat(kSliceSize, ": must be a number from 1 to the role's ", count,
                                " replicas, got \"", *size, "\""));
  }
  if (group && !required && !preferred) {
    return invalid(
        absl::StrCat(kPodSetGroupName, ": needs ", kRequiredTopology, " or ", kPreferredTopology));
  }
  if (!required && !preferred && !unconstrained && !slice) return std::optional<json>();
  json request = json::object();
  if (required) {
    request["required"] = *required;
  } else if (preferred) {
    request["preferred"] = *preferred;
  } else if (unconstrained) {
    request["unconstrained"] = *unconstrained == "true";
  }
  if (group) request["podSetGroupName"] = *group;
  if (slice) {
    request["podSetSliceRequiredTopology"] = *slice;
    request["podSetSliceSize"] = slice_size;
  }
  request["podIndexLabel"] = index_label;
  return std::optional<json>(std::move(request));
}

}  // namespace disttrain::queueing
