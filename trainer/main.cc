// disttrain-trainer: the parameter-server training runtime. One binary plays every role that
// TF_CONFIG names (ps, chief/master, worker, evaluator); `local` runs a whole cluster here.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/tf_config.h"
#include "common/version.h"
#include "trainer/cluster_spec.h"
#include "trainer/launcher/local_launcher.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/options.h"
#include "trainer/roles.h"
#include "trainer/wire/transport_security.h"
#include "trainer/wire/wire.h"

namespace {

using namespace disttrain;           // NOLINT: main wires the pieces together
using namespace disttrain::trainer;  // NOLINT

constexpr char kUsage[] =
    "disttrain-trainer [flags]\n"
    "       disttrain-trainer local --ps N --workers M [--chief] [--evaluator] [--tls] -- [flags]\n"
    "\n"
    "Plays the role TF_CONFIG names: parameter server, chief, worker or evaluator.\n"
    "Exit codes: 0 done; 1 internal error; 2 invalid configuration (TF_CONFIG or flags,\n"
    "permanent); 138 transient failure such as parameter servers unreachable past\n"
    "--retry-seconds (retry it); 143 stopped by SIGTERM (a parameter server exits 0).";

int Run(const std::vector<std::string>& args) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  TrainerOptions options;
  bool version = false;
  FlagSet flags(kUsage);
  RegisterFlags(&flags, &options);
  flags.Bool("version", &version, "Print the version and exit.");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (rest.ok() && !rest->empty())
    rest = absl::InvalidArgumentError("unexpected argument \"" + rest->front() + "\"");
  if (!rest.ok()) {
    std::cerr << "disttrain-trainer: " << rest.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (version) {
    std::cout << "disttrain-trainer " << Version() << "\n";
    return kExitOk;
  }
  if (absl::Status s = ValidateOptions(options); !s.ok()) {
    std::cerr << "disttrain-trainer: " << s.message() << "\n";
    return kExitUsage;
  }
  if (!options.tls_dir.empty()) {
    absl::StatusOr<TlsMaterial> tls = LoadTlsDir(options.tls_dir);
    if (!tls.ok()) {
      std::cerr << "disttrain-trainer: " << tls.status().message() << "\n";
      return kExitUsage;
    }
    UseTls(*std::move(tls));
  }
  const char* env = std::getenv("TF_CONFIG");
  if (env == nullptr || *env == '\0') {
    std::cerr << "disttrain-trainer: TF_CONFIG is not set; it names this task's role and its peers "
                 "(the operator sets it; `disttrain-trainer local` runs a cluster here)\n";
    return kExitUsage;
  }
  absl::StatusOr<TfConfig> config = ParseTfConfig(env);
  absl::StatusOr<ClusterSpec> spec = config.ok() ? MakeClusterSpec(*config) : config.status();
  if (!spec.ok()) {
    std::cerr << "disttrain-trainer: " << spec.status().message() << "\n";
    return kExitUsage;
  }
  ApplySchemeDefaults(flags, spec->num_replicas(), &options);
  if (absl::StatusOr<SchemeConfig> scheme = MakeSchemeConfig(options, spec->num_replicas());
      !scheme.ok()) {
    std::cerr << "disttrain-trainer: " << scheme.status().message() << "\n";
    return kExitUsage;
  }

  std::atomic<bool> stop{false};
  std::thread([signals, &stop] {
    int sig;
    sigwait(&signals, &sig);
    stop = true;
  }).detach();

  LogInfo("starting", {{"task", spec->TaskName()},
                       {"role", RoleName(spec->role)},
                       {"mode", options.mode},
                       {"steps", absl::StrCat(options.steps)},
                       {"learning_rate", absl::StrCat(options.learning_rate)},
                       {"model", options.model},
                       {"tls", options.tls_dir.empty() ? "off" : "mutual"},
                       {"version", Version()}});
  absl::StatusOr<std::unique_ptr<HttpServer>> metrics =
      ServeMetrics(options.metrics_address, spec->role);
  if (!metrics.ok()) {  // observability must not stop training
    LogWarning("cannot serve /metrics",
               {{"address", options.metrics_address}, {"error", metrics.status().ToString()}});
  } else if (*metrics != nullptr) {
    LogInfo("serving /metrics",
            {{"task", spec->TaskName()}, {"port", absl::StrCat((*metrics)->port())}});
  }
  switch (spec->role) {
    case Role::kPs:
      return RunParameterServer(*spec, options, stop);
    case Role::kEvaluator:
      return RunEvaluator(*spec, options, stop);
    case Role::kChief:
    case Role::kWorker:
      return RunReplica(*spec, options, stop);
  }
  return kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built to track every Mutex's lock order (a debug aid: 177 against 97 ns
  // per contended lock pair, measured). Off in the shipped binaries; the tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  disttrain::trainer::wire::KeepFreedMemoryMapped();
  disttrain::trainer::wire::PollConnectsPromptly();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "local")
    return disttrain::trainer::RunLocalCluster({args.begin() + 1, args.end()});
  return Run(args);
}
