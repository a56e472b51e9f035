// A small command-line flag parser shared by the operator and the trainer.
//
// Flags are declared against variables that hold their defaults; Parse() accepts
// `--name=value`, `--name value` and, for booleans, `--name` / `--name=false`. Unknown flags,
// missing values and values of the wrong type are errors naming the flag. `--help` is built in.
// Not thread-safe: declare and parse on one thread before starting others.
#ifndef DISTTRAIN_COMMON_FLAGS_H_
#define DISTTRAIN_COMMON_FLAGS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace disttrain {

// Exit codes shared by both binaries (documented in docs/trainer.md, "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

class FlagSet {
 public:
  // `usage` is printed first by Help(), e.g. "disttrain-operator [flags]".
  explicit FlagSet(std::string usage);

  void String(std::string name, std::string* value, std::string help);
  void Int(std::string name, int64_t* value, std::string help);
  void Double(std::string name, double* value, std::string help);
  void Bool(std::string name, bool* value, std::string help);

  // Parses `args` (without the program name). Returns the positional arguments in order;
  // everything after a bare `--` is positional.
  absl::StatusOr<std::vector<std::string>> Parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_; }
  // Whether the last Parse() set flag `name` (as opposed to leaving its default).
  bool WasSet(const std::string& name) const;
  std::string Help() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    bool is_bool = false;
    std::function<absl::Status(const std::string&)> set;
  };
  void Add(Flag flag);
  const Flag* Find(const std::string& name) const;

  std::string usage_;
  std::vector<Flag> flags_;
  bool help_ = false;
  std::vector<std::string> set_;
};

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_FLAGS_H_
