// Typed reading of JSON members for the codecs of both fronts (codec.cc, tfjob_codec.cc):
// errors name the field at fault. Internal to operator/api; stateless helpers.
#ifndef DISTTRAIN_OPERATOR_API_FIELDS_H_
#define DISTTRAIN_OPERATOR_API_FIELDS_H_

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::api::internal {

using json = nlohmann::json;

absl::StatusOr<absl::Time> ParseTime(absl::string_view text);

inline absl::Status FieldError(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

// Reads optional typed members of one JSON object, remembering the first error.
class Fields {
 public:
  Fields(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_null() && !object_.is_object())
      status_ = FieldError(path_, "must be an object");
  }

  const json* Find(absl::string_view key) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string Path(absl::string_view key) const {
    return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
  }

  template <typename Int>
  void ReadInt(absl::string_view key, Int* out) {
    std::optional<Int> v;
    ReadInt(key, &v);
    if (v) *out = *v;
  }
  template <typename Int>
  void ReadInt(absl::string_view key, std::optional<Int>* out) {
    const json* v = Find(key);
    if (v == nullptr || !status_.ok()) return;
    if (!v->is_number_integer()) return Fail(key, "must be an integer");
    int64_t n = v->get<int64_t>();
    if (n < std::numeric_limits<Int>::min() || n > std::numeric_limits<Int>::max()) {
      return Fail(key, "is out of range");
    }
    *out = static_cast<Int>(n);
  }
  void ReadString(absl::string_view key, std::string* out) {
    const json* v = Find(key);
    if (v == nullptr || !status_.ok()) return;
    if (!v->is_string()) return Fail(key, "must be a string");
    *out = v->get<std::string>();
  }
  void ReadDouble(absl::string_view key, std::optional<double>* out) {
    const json* v = Find(key);
    if (v == nullptr || !status_.ok()) return;
    if (!v->is_number()) return Fail(key, "must be a number");
    *out = v->get<double>();
  }
  void ReadBool(absl::string_view key, bool* out) {
    const json* v = Find(key);
    if (v == nullptr || !status_.ok()) return;
    if (!v->is_boolean()) return Fail(key, "must be true or false");
    *out = v->get<bool>();
  }
  void ReadTime(absl::string_view key, std::optional<absl::Time>* out) {
    std::string text;
    ReadString(key, &text);
    if (text.empty() || !status_.ok()) return;
    absl::StatusOr<absl::Time> t = ParseTime(text);
    if (!t.ok()) return Fail(key, t.status().message());
    *out = *t;
  }
  void ReadStringMap(absl::string_view key, std::map<std::string, std::string>* out) {
    const json* v = Find(key);
    if (v == nullptr || !status_.ok()) return;
    if (!v->is_object()) return Fail(key, "must be a map of strings");
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) return Fail(key, absl::StrCat("value of \"", k, "\" must be a string"));
      (*out)[k] = val.get<std::string>();
    }
  }
  // Reads a string member that must be one of `names` (index into it), when present.
  template <typename Enum, size_t N>
  void ReadEnum(absl::string_view key,
                const std::array<std::pair<absl::string_view, Enum>, N>& names, Enum* out) {
    std::string text;
    bool present = Find(key) != nullptr;
    ReadString(key, &text);
    if (!present || !status_.ok()) return;
    std::string allowed;
    for (const auto& [name, value] : names) {
      if (name == text) {
        *out = value;
        return;
      }
      absl::StrAppend(&allowed, allowed.empty() ? "" : ", ", "\"", name, "\"");
    }
    Fail(key, absl::StrCat("unsupported value \"", text, "\": want one of ", allowed));
  }

  void Fail(absl::string_view key, absl::string_view message) {
    if (status_.ok()) status_ = FieldError(Path(key), message);
  }
  void Merge(const absl::Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }
  const absl::Status& status() const { return status_; }

 private:
  const json& object_;
  std::string path_;
  absl::Status status_;
};

inline constexpr std::array<std::pair<absl::string_view, RestartPolicy>, 4> kRestartPolicies = {{
    {"Never", RestartPolicy::kNever},
    {"OnFailure", RestartPolicy::kOnFailure},
    {"Always", RestartPolicy::kAlways},
    {"ExitCode", RestartPolicy::kExitCode},
}};
inline constexpr std::array<std::pair<absl::string_view, CleanPodPolicy>, 3> kCleanPodPolicies = {{
    {"Running", CleanPodPolicy::kRunning},
    {"All", CleanPodPolicy::kAll},
    {"None", CleanPodPolicy::kNone},
}};
inline constexpr std::array<std::pair<absl::string_view, JobPorts>, 2> kJobPorts = {{
    {"TFConfig", JobPorts::kTfConfig},
    {"All", JobPorts::kAll},
}};
inline constexpr std::array<std::pair<absl::string_view, SuccessPolicy>, 2> kSuccessPolicies = {{
    {"", SuccessPolicy::kDefault},
    {"AllWorkers", SuccessPolicy::kAllWorkers},
}};

// Shared by both fronts: the parts of a job the two APIs spell alike.
absl::Status DecodeMetadata(const json& j, ObjectMeta* meta);
absl::Status DecodeReplicaSpec(const json& j, const std::string& path, ReplicaSpec* spec);
absl::Status DecodeRunPolicy(const json& j, RunPolicy* run);
// Conditions as Kubernetes writes them, into `status->conditions`.
absl::Status DecodeConditions(const json& j, JobStatus* status);
json EncodeCondition(const Condition& c);

}  // namespace disttrain::api::internal

#endif  // DISTTRAIN_OPERATOR_API_FIELDS_H_
