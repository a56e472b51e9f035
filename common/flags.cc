#include "common/flags.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace disttrain {

FlagSet::FlagSet(std::string usage) : usage_(std::move(usage)) {
  Bool("help", &help_, "Print this help and exit.");
}

void FlagSet::Add(Flag flag) { flags_.push_back(std::move(flag)); }

void FlagSet::String(std::string name, std::string* value, std::string help) {
  Add({std::move(name), std::move(help), absl::StrCat("\"", *value, "\""), false,
       [value](const std::string& v) {
         *value = v;
         return absl::OkStatus();
       }});
}

void FlagSet::Int(std::string name, int64_t* value, std::string help) {
  std::string flag_name = name;
  Add({std::move(name), std::move(help), absl::StrCat(*value), false,
       [value, flag_name](const std::string& v) {
         if (!absl::SimpleAtoi(v, value)) {
           return absl::InvalidArgumentError(
               absl::StrCat("flag --", flag_name, ": \"", v, "\" is not an integer"));
         }
         return absl::OkStatus();
       }});
}

void FlagSet::Double(std::string name, double* value, std::string help) {
  std::string flag_name = name;
  Add({std::move(name), std::move(help), absl::StrCat(*value), false,
       [value, flag_name](const std::string& v) {
         if (!absl::SimpleAtod(v, value)) {
           return absl::InvalidArgumentError(
               absl::StrCat("flag --", flag_name, ": \"", v, "\" is not a number"));
         }
         return absl::OkStatus();
       }});
}

void FlagSet::Bool(std::string name, bool* value, std::string help) {
  std::string flag_name = name;
  Add({std::move(name), std::move(help), *value ? "true" : "false", true,
       [value, flag_name](const std::string& v) {
         if (!absl::SimpleAtob(v, value)) {
           return absl::InvalidArgumentError(
               absl::StrCat("flag --", flag_name, ": \"", v, "\" is not true or false"));
         }
         return absl::OkStatus();
       }});
}

const FlagSet::Flag* FlagSet::Find(const std::string& name) const {
  auto it =
      std::find_if(flags_.begin(), flags_.end(), [&](const Flag& f) { return f.name == name; });
  return it == flags_.end() ? nullptr : &*it;
}

absl::StatusOr<std::vector<std::string>> FlagSet::Parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body;
    std::string value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!has_value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
    }
    if (absl::Status s = flag->set(value); !s.ok()) return s;
    set_.push_back(name);
  }
  return positional;
}

bool FlagSet::WasSet(const std::string& name) const {
  return std::find(set_.begin(), set_.end(), name) != set_.end();
}

std::string FlagSet::Help() const {
  std::string out = absl::StrCat("Usage: ", usage_, "\n\nFlags:\n");
  for (const Flag& f : flags_) {
    absl::StrAppend(&out, "  --", f.name, f.is_bool ? "" : " VALUE", "\n      ", f.help,
                    " (default ", f.default_text, ")\n");
  }
  return out;
}

}  // namespace disttrain
