#include "operator/api/pod_template.h"

#include "absl/strings/str_cat.h"

namespace disttrain::api {
namespace {

using json = nlohmann::json;

absl::Status Wrong(const std::string& path, absl::string_view want) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": must be ", want));
}

// The member `key` of `object`, or nullptr when absent or null (Kubernetes treats null as unset).
const json* Member(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

absl::Status CheckString(const json& object, const char* key, const std::string& path,
                         bool required) {
  const json* v = Member(object, key);
  if (v == nullptr)
    return required ? absl::InvalidArgumentError(absl::StrCat(path, ".", key, ": is required"))
                    : absl::OkStatus();
  return v->is_string() ? absl::OkStatus() : Wrong(absl::StrCat(path, ".", key), "a string");
}

absl::Status CheckStringMap(const json& object, const char* key, const std::string& path) {
  const json* v = Member(object, key);
  if (v == nullptr) return absl::OkStatus();
  const std::string at = absl::StrCat(path, ".", key);
  if (!v->is_object()) return Wrong(at, "a map of strings");
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) return Wrong(absl::StrCat(at, "[\"", k, "\"]"), "a string");
  }
  return absl::OkStatus();
}

absl::Status CheckStringList(const json& object, const char* key, const std::string& path) {
  const json* v = Member(object, key);
  if (v == nullptr) return absl::OkStatus();
  const std::string at = absl::StrCat(path, ".", key);
  if (!v->is_array()) return Wrong(at, "a list of strings");
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) return Wrong(absl::StrCat(at, "[", i, "]"), "a string");
  }
  return absl::OkStatus();
}

// A list member whose items are objects, each checked by `item(object, path)`.
template <typename Fn>
absl::Status CheckObjectList(const json& object, const char* key, const std::string& path,
                             Fn item) {
  const json* v = Member(object, key);
  if (v == nullptr) return absl::OkStatus();
  const std::string at = absl::StrCat(path, ".", key);
  if (!v->is_array()) return Wrong(at, "a list");
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string item_path = absl::StrCat(at, "[", i, "]");
    if (!(*v)[i].is_object()) return Wrong(item_path, "an object");
    if (absl::Status s = item((*v)[i], item_path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckEnvVar(const json& env, const std::string& path) {
  if (absl::Status s = CheckString(env, "name", path, /*required=*/true); !s.ok()) return s;
  if (absl::Status s = CheckString(env, "value", path, /*required=*/false); !s.ok()) return s;
  if (const json* from = Member(env, "valueFrom"); from != nullptr && !from->is_object()) {
    return Wrong(absl::StrCat(path, ".valueFrom"), "an object");
  }
  return absl::OkStatus();
}

absl::Status CheckPort(const json& port, const std::string& path) {
  if (absl::Status s = CheckString(port, "name", path, /*required=*/false); !s.ok()) return s;
  const json* n = Member(port, "containerPort");
  if (n == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(path, ".containerPort: is required"));
  if (!n->is_number_integer() || n->get<int64_t>() < 1 || n->get<int64_t>() > 65535) {
    return Wrong(absl::StrCat(path, ".containerPort"), "an integer from 1 to 65535");
  }
  return absl::OkStatus();
}

absl::Status CheckResources(const json& container, const std::string& path) {
  const json* r = Member(container, "resources");
  if (r == nullptr) return absl::OkStatus();
  const std::string at = absl::StrCat(path, ".resources");
  if (!r->is_object()) return Wrong(at, "an object");
  for (const char* kind : {"limits", "requests"}) {
    const json* list = Member(*r, kind);
    if (list == nullptr) continue;
    const std::string list_path = absl::StrCat(at, ".", kind);
    if (!list->is_object()) return Wrong(list_path, "a map of quantities");
    for (const auto& [name, q] : list->items()) {
      if (!q.is_string() && !q.is_number()) {
        return Wrong(absl::StrCat(list_path, "[\"", name, "\"]"),
                     "a quantity (a string or a number)");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckContainer(const json& c, const std::string& path) {
  for (absl::Status s :
       {CheckString(c, "name", path, /*required=*/true),
        CheckString(c, "image", path, /*required=*/false), CheckStringList(c, "command", path),
        CheckStringList(c, "args", path), CheckObjectList(c, "env", path, CheckEnvVar),
        CheckObjectList(c, "ports", path, CheckPort), CheckResources(c, path)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPodTemplate(const json& pod_template, const std::string& path) {
  if (!pod_template.is_object()) return Wrong(path, "an object (a PodTemplateSpec)");
  if (const json* meta = Member(pod_template, "metadata")) {
    const std::string at = absl::StrCat(path, ".metadata");
    if (!meta->is_object()) return Wrong(at, "an object");
    if (absl::Status s = CheckStringMap(*meta, "labels", at); !s.ok()) return s;
    if (absl::Status s = CheckStringMap(*meta, "annotations", at); !s.ok()) return s;
  }
  const json* spec = Member(pod_template, "spec");
  if (spec == nullptr) return absl::OkStatus();  // validation reports the missing spec
  const std::string at = absl::StrCat(path, ".spec");
  if (!spec->is_object()) return Wrong(at, "an object (a PodSpec)");
  for (absl::Status s : {CheckObjectList(*spec, "containers", at, CheckContainer),
                         CheckObjectList(*spec, "initContainers", at, CheckContainer),
                         CheckString(*spec, "restartPolicy", at, /*required=*/false),
                         CheckString(*spec, "priorityClassName", at, /*required=*/false)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace disttrain::api
