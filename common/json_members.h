// Members of a JSON object read in place. nlohmann's value(name, json::object()) returns a copy
// of the member, which on the operator's hot paths (a pod's metadata and status on every event
// and pass) was a deep copy per read.
#ifndef DISTTRAIN_COMMON_JSON_MEMBERS_H_
#define DISTTRAIN_COMMON_JSON_MEMBERS_H_

#include <string_view>

#include "nlohmann/json.hpp"

namespace disttrain {

// object[name] when `object` is an object and that member is an object too, else an empty one.
inline const nlohmann::json& ObjectMember(const nlohmann::json& object, const char* name) {
  static const nlohmann::json* const kEmpty = new nlohmann::json(nlohmann::json::object());
  if (!object.is_object()) return *kEmpty;
  auto it = object.find(name);
  return it != object.end() && it->is_object() ? *it : *kEmpty;
}

// object[name] when `object` is an object and that member is an array, else an empty array.
inline const nlohmann::json& ArrayMember(const nlohmann::json& object, const char* name) {
  static const nlohmann::json* const kEmpty = new nlohmann::json(nlohmann::json::array());
  if (!object.is_object()) return *kEmpty;
  auto it = object.find(name);
  return it != object.end() && it->is_array() ? *it : *kEmpty;
}

// object[name] when `object` is an object and that member is a string, else empty: a view into
// `object`, valid while it lives and is not changed.
inline std::string_view StringMember(const nlohmann::json& object, const char* name) {
  if (!object.is_object()) return {};
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                               : std::string_view();
}

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_JSON_MEMBERS_H_
