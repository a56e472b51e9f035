// disttrain-operator: the Kubernetes controller for DistributedTraining jobs.
//
//   disttrain-operator [flags]          runs the controller (see --help)
//   disttrain-operator render -f JOB    prints the objects a job would get
#include <iostream>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/version.h"
#include "operator/cli/render.h"

namespace {

constexpr char kUsage[] =
    "disttrain-operator [flags]\n"
    "       disttrain-operator render -f JOB.yaml [-o yaml|json]   (see render --help)\n"
    "\n"
    "Runs the DistributedTraining controller against the cluster in --kubeconfig (or the\n"
    "in-cluster service account).";

int RunController(const std::vector<std::string>& args) {
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
  if (!rest->empty()) {
    std::cerr << "disttrain-operator: unknown command \"" << rest->front() << "\" (see --help)\n";
    return disttrain::kExitUsage;
  }
  std::cerr << "disttrain-operator: the controller is not built yet; see --help\n";
  return disttrain::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "render") {
    return disttrain::cli::RunRender({args.begin() + 1, args.end()}, std::cout, std::cerr);
  }
  return RunController(args);
}
