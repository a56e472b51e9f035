// kubectl-dtr: the kubectl plugin for DistributedTraining jobs (`kubectl dtr ...`). It talks to
// the API server with the operator's own client and the user's kubeconfig.
#include <iostream>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/version.h"
#include "operator/cli/convert.h"
#include "operator/cli/render.h"
#include "operator/kube/config.h"
#include "plugin/commands.h"

namespace {

using namespace disttrain;  // NOLINT: main wires the pieces together

constexpr char kUsage[] =
    "kubectl dtr: follow DistributedTraining jobs.\n"
    "\n"
    "  JOB is NAME (a DistributedTraining) or tfjob/NAME (a Kubeflow TFJob the operator runs).\n"
    "\n"
    "  kubectl dtr logs JOB [-f] [--timestamps] [--role ROLE]\n"
    "      Every pod's logs (the main container), each line prefixed \"JOB.ROLE.INDEX |\" and\n"
    "      merged in time order. A container restarted in place shows its run before the\n"
    "      restart too (kubectl logs --previous), prefixed \"JOB.ROLE.INDEX (previous) |\".\n"
    "      -f follows them as they come: new pods and restarted containers join, and it\n"
    "      ends when the job has finished and every stream ended.\n"
    "  kubectl dtr status JOB\n"
    "      The job's state, replicas and result (final step, loss, test accuracy), then each\n"
    "      pod's role, phase, container state, restarts, node and age, then the conditions.\n"
    "  kubectl dtr top JOB\n"
    "      CPU and memory of each pod now, from the kubelet's summary API through the API\n"
    "      server (needs nodes/proxy; pods on nodes without a kubelet show <unknown>).\n"
    "  kubectl dtr render -f JOB.yaml [-o yaml|json]\n"
    "      The objects the operator would create for a job, after defaults and validation,\n"
    "      without a cluster (as `disttrain-operator render`).\n"
    "  kubectl dtr convert -f TFJOB.yaml [-o yaml|json]\n"
    "      The DistributedTraining that runs each Kubeflow TFJob in the file the same way, to\n"
    "      move off the TFJob API for good; what runs differently is said on stderr.\n"
    "\n"
    "Flags of logs, status and top:\n"
    "  -n, --namespace NS   the job's namespace (default: the kubeconfig context's, else default)\n"
    "  --kubeconfig FILE    default $KUBECONFIG, else ~/.kube/config\n"
    "  --context NAME       a kubeconfig context other than the current one\n"
    "\n"
    "Exit codes: 0 done; 1 the cluster refused or the job does not exist; 2 invalid arguments.\n"
    "Install: put kubectl-dtr on PATH (the operator image carries it in /usr/local/bin).";

// kubectl's short flags as their long forms.
std::vector<std::string> LongFlags(std::vector<std::string> args, const std::string& command) {
  for (std::string& a : args) {
    if (a == "-n") a = "--namespace";
    if (a == "-f" && command == "logs") a = "--follow";
    if (a == "-h") a = "--help";
  }
  return args;
}

int Main(const std::vector<std::string>& all) {
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    std::cout << kUsage << "\n";
    return all.empty() ? 2 : 0;
  }
  if (all[0] == "--version" || all[0] == "version") {
    std::cout << "kubectl-dtr " << Version() << "\n";
    return 0;
  }
  const std::string command = all[0];
  std::vector<std::string> args(all.begin() + 1, all.end());
  if (command == "render") return cli::RunRender(args, std::cout, std::cerr);
  if (command == "convert") return cli::RunConvert(args, std::cout, std::cerr);
  if (command != "logs" && command != "status" && command != "top") {
    std::cerr << "kubectl dtr: unknown command \"" << command
              << "\"; one of logs, status, top, render, convert (kubectl dtr --help)\n";
    return 2;
  }
  std::string ns, kubeconfig, context;
  plugin::LogsOptions logs;
  FlagSet flags(std::string("kubectl dtr ") + command + " JOB [flags]");
  flags.String("namespace", &ns, "The job's namespace (-n).");
  flags.String("kubeconfig", &kubeconfig, "Path of the kubeconfig.");
  flags.String("context", &context, "The kubeconfig context to use.");
  if (command == "logs") {
    flags.Bool("follow", &logs.follow, "Follow the logs (-f).");
    flags.Bool("timestamps", &logs.timestamps, "Print each line's time first.");
    flags.String("role", &logs.role, "Only this role's pods: chief, ps, worker or evaluator.");
  }
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(LongFlags(args, command));
  if (rest.ok() && flags.help_requested()) {
    std::cout << flags.Help() << "\n";
    return 0;
  }
  if (rest.ok() && rest->size() != 1)
    rest = absl::InvalidArgumentError("want exactly one job name");
  plugin::Target target;
  if (rest.ok()) {
    if (absl::Status s = plugin::ParseJobRef(rest->front(), &target); !s.ok()) rest = s;
  }
  if (!rest.ok()) {
    std::cerr << "kubectl dtr " << command << ": " << rest.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<kube::RestConfig> config = kube::LoadConfig(kubeconfig, context);
  if (!config.ok()) {
    std::cerr << "Error: " << config.status().message() << "\n";
    return 1;
  }
  config->user_agent = "kubectl-dtr";
  if (ns.empty()) ns = config->namespace_name.empty() ? "default" : config->namespace_name;
  absl::StatusOr<std::unique_ptr<kube::RestKubeClient>> client =
      kube::RestKubeClient::Create(*config);
  if (!client.ok()) {
    std::cerr << "Error: " << client.status().message() << "\n";
    return 1;
  }
  target.client = client->get();
  target.ns = ns;
  if (command == "logs") return plugin::RunLogs(target, logs, std::cout, std::cerr);
  if (command == "status") return plugin::RunStatus(target, std::cout, std::cerr);
  return plugin::RunTop(target, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) { return Main({argv + 1, argv + argc}); }
