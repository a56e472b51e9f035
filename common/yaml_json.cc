#include "common/yaml_json.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace disttrain {
namespace {

using nlohmann::json;

const std::regex& IntPattern() {
  static const std::regex r("[-+]?(0|[1-9][0-9]*)|0o[0-7]+|0x[0-9a-fA-F]+");
  return r;
}
const std::regex& FloatPattern() {
  static const std::regex r(
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|"
      "NAN)");
  return r;
}

json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (std::regex_match(s, IntPattern())) {
    try {
      if (s.rfind("0o", 0) == 0) return std::stoll(s.substr(2), nullptr, 8);
      if (s.rfind("0x", 0) == 0) return std::stoll(s.substr(2), nullptr, 16);
      return std::stoll(s);
    } catch (const std::exception&) {
      return s;  // out of range: keep the text
    }
  }
  if (std::regex_match(s, FloatPattern())) {
    try {
      return std::stod(s);
    } catch (const std::exception&) {
      return s;
    }
  }
  return s;
}

absl::StatusOr<json> NodeToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const YAML::Node& item : node) {
        absl::StatusOr<json> v = NodeToJson(item);
        if (!v.ok()) return v;
        out.push_back(*std::move(v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", kv.first.Mark().line + 1, ": map keys must be scalars"));
        }
        absl::StatusOr<json> v = NodeToJson(kv.second);
        if (!v.ok()) return v;
        out[kv.first.Scalar()] = *std::move(v);
      }
      return out;
    }
  }
  return json(nullptr);
}

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  json as_plain = ScalarToJson(YAML::Node(s));
  return !as_plain.is_string();
}

void Emit(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : value.items()) {
        out << YAML::Key;
        if (NeedsQuotes(k)) out << YAML::DoubleQuoted;
        out << k << YAML::Value;
        Emit(out, v);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& v : value) Emit(out, v);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      const bool multiline = s.find('\n') != std::string::npos;
      // A literal block reads back with exactly one trailing newline, so only text that ends
      // in one (a script, a config file) is written that way; other text is quoted.
      if (multiline && s.size() >= 2 && s.back() == '\n' && s[s.size() - 2] != '\n') {
        out << YAML::Literal;
      } else if (multiline || NeedsQuotes(s)) {
        out << YAML::DoubleQuoted;
      }
      out << s;
      break;
    }
    case json::value_t::boolean:
      out << (value.get<bool>() ? "true" : "false");
      break;
    case json::value_t::null:
      out << YAML::Null;
      break;
    default:  // numbers
      out << value.dump();
      break;
  }
}

}  // namespace

absl::StatusOr<std::vector<json>> ParseYamlDocuments(absl::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid YAML: ", e.what()));
  }
  std::vector<json> out;
  for (const YAML::Node& doc : docs) {
    if (doc.IsNull()) continue;
    absl::StatusOr<json> j = NodeToJson(doc);
    if (!j.ok()) return j.status();
    out.push_back(*std::move(j));
  }
  return out;
}

std::string ToYaml(const json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetMapFormat(YAML::Block);
  out.SetSeqFormat(YAML::Block);
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace disttrain
