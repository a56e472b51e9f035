// disttrain-operator: the Kubernetes controller for DistributedTraining jobs.
#include <iostream>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/version.h"

namespace {

constexpr char kUsage[] =
    "disttrain-operator [flags]\n"
    "\n"
    "Runs the DistributedTraining controller against the cluster in --kubeconfig (or the\n"
    "in-cluster service account).";

int Run(const std::vector<std::string>& args) {
  bool version = false;
  disttrain::FlagSet flags(kUsage);
  flags.Bool("version", &version, "Print the version and exit.");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (!rest.ok()) {
    std::cerr << "disttrain-operator: " << rest.status().message() << "\n";
    return disttrain::kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return disttrain::kExitOk;
  }
  if (version) {
    std::cout << "disttrain-operator " << disttrain::Version() << "\n";
    return disttrain::kExitOk;
  }
  std::cerr << "disttrain-operator: the controller is not built yet; see --help\n";
  return disttrain::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) { return Run(std::vector<std::string>(argv + 1, argv + argc)); }
