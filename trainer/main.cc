// disttrain-trainer: the parameter-server training runtime.
#include <iostream>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/version.h"

namespace {

constexpr char kUsage[] =
    "disttrain-trainer [flags]\n"
    "\n"
    "Plays the role TF_CONFIG names: parameter server, chief, worker or evaluator.";

int Run(const std::vector<std::string>& args) {
  bool version = false;
  disttrain::FlagSet flags(kUsage);
  flags.Bool("version", &version, "Print the version and exit.");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (!rest.ok()) {
    std::cerr << "disttrain-trainer: " << rest.status().message() << "\n";
    return disttrain::kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return disttrain::kExitOk;
  }
  if (version) {
    std::cout << "disttrain-trainer " << disttrain::Version() << "\n";
    return disttrain::kExitOk;
  }
  std::cerr << "disttrain-trainer: training is not built yet; see --help\n";
  return disttrain::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) { return Run(std::vector<std::string>(argv + 1, argv + argc)); }
