// disttrain-operator: the Kubernetes controller for DistributedTraining jobs.
//
//   disttrain-operator [flags]          runs the controller (see --help)
//   disttrain-operator render -f JOB    prints the objects a job would get
//
// Wires the pieces together: flags -> client -> one front per API (controller/front.h:
// informers -> work queue -> reconciler) -> manager.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/version.h"
#include "operator/cli/render.h"
#include "operator/controller/front.h"
#include "operator/controller/job_api.h"
#include "operator/kube/config.h"
#include "operator/kube/rest_kube_client.h"
#include "operator/runtime/background_event_recorder.h"
#include "operator/runtime/event_recorder.h"
#include "operator/runtime/manager.h"
#include "pplx/threadpool.h"

namespace {

using namespace disttrain;  // NOLINT: main wires every layer together

constexpr char kUsage[] =
    "disttrain-operator [flags]\n"
    "       disttrain-operator render -f JOB.yaml [-o yaml|json]   (see render --help)\n"
    "\n"
    "Runs the DistributedTraining controller against the cluster in --kubeconfig (or the\n"
    "in-cluster service account). Exit codes: 0 stopped by SIGTERM/SIGINT, 1 runtime failure\n"
    "(including a lost leader lease), 2 invalid flags or configuration.";

struct Flags {
  std::string kubeconfig, context, namespace_name;
  int64_t workers = 6;
  int64_t http_threads = 1;
  int64_t parallel_requests = 4;
  int64_t max_in_flight = 16;
  int64_t pod_event_batch_ms = 500;
  int64_t progress_interval = 30;
  double progress_rate = 10;
  // 400/800 sits above what the benchmark's 2-core API server sustains, so its limit binds
  // creation (1.24x the bare client's time; 100/200 bound it at 1.77x, docs/operations.md) while a
  // runaway loop stays bounded. --kube-api-qps=0 leaves the limit to priority and fairness.
  double qps = 400;
  int64_t burst = 800;
  bool leader_elect = false;
  std::string leader_election_namespace, leader_election_id = "disttrain-operator-leader";
  std::string metrics_addr = ":8080", probe_addr = ":8081";
  std::string cluster_domain, gang_scheduler = "volcano";
  bool network_policy = true;
  bool kueue = false;
  bool kueue_pods_ready = true;
  bool tfjob = false;
  std::string tfjob_namespace_selector;
  std::string tfjob_queueing = "operator";
  int64_t verbosity = 2;
  bool version = false;
};

// The namespace of the operator's pod; "" outside a pod.
std::string InClusterNamespace() {
  if (const char* env = std::getenv("POD_NAMESPACE"); env && *env) return env;
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty()) return ns;
  return "";
}

std::string PodNamespace() {
  std::string ns = InClusterNamespace();
  return ns.empty() ? "default" : ns;
}

std::string Identity() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::mt19937 rng{std::random_device{}()};
  return absl::StrCat(host, "_", rng() % 1000000);
}

int RunController(const std::vector<std::string>& args) {
  // Block the stop signals before any thread exists (cpprestsdk starts its own), so that every
  // thread inherits the mask and only the signal thread below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Flags f;
  FlagSet flags(kUsage);
  flags.String("kubeconfig", &f.kubeconfig,
               "Path to a kubeconfig; default $KUBECONFIG, then in-cluster.");
  flags.String("context", &f.context, "kubeconfig context to use; default its current-context.");
  flags.String("namespace", &f.namespace_name,
               "Watch only this namespace; default all namespaces.");
  flags.Int("workers", &f.workers, "Jobs reconciled in parallel.");
  flags.Int("http-client-threads", &f.http_threads,
            "Threads of the HTTP client's I/O pool (cpprestsdk's default is 40); requests block "
            "the reconcile workers, not these threads. One is enough for the TLS and HTTP work "
            "of the requests and watches; more threads wake each other for every response.");
  flags.Int("parallel-requests", &f.parallel_requests,
            "API requests one reconcile issues at once when it creates a job's missing replicas "
            "(after the first succeeded) or deletes its pods; all of them together are bounded by "
            "--max-requests-in-flight.");
  flags.Int("max-requests-in-flight", &f.max_in_flight,
            "API requests in flight at once across all workers (watches aside), hence the "
            "keep-alive connections held (each with its own TLS context); a worker between "
            "requests leaves its share to the others. 0: no bound beyond --workers x "
            "--parallel-requests.");
  flags.Int("pod-event-batch-ms", &f.pod_event_batch_ms,
            "A pod's changes other than its exit or deletion (created, running, ready) queue its "
            "job this many ms after the first of them, so pods that start together cost one "
            "pass and one status write; 0 queues at once.");
  flags.Int("progress-interval-seconds", &f.progress_interval,
            "Read each training DistributedTraining's progress (status.progress: step, percent, "
            "rates, ETA) from its chief's /metrics at most this often, so its status is written "
            "at most this often for it; 0 reads none.");
  flags.Double("progress-readings-per-second", &f.progress_rate,
               "Progress readings of all jobs together per second (so the status writes they "
               "bring): with many jobs, each is read less often than --progress-interval-seconds.");
  flags.Double("kube-api-qps", &f.qps,
               "Client-side limit of API requests per second; 0 leaves the limit to the API "
               "server's priority and fairness. Deletes are never limited client-side.");
  flags.Int("kube-api-burst", &f.burst, "Client-side burst of API requests.");
  flags.Bool("leader-elect", &f.leader_elect,
             "Elect a leader with a Lease; only the leader reconciles.");
  flags.String("leader-election-namespace", &f.leader_election_namespace,
               "Namespace of the leader Lease; default the pod's namespace.");
  flags.String("leader-election-id", &f.leader_election_id, "Name of the leader Lease.");
  flags.String("metrics-bind-address", &f.metrics_addr,
               "host:port of /metrics (port 0 picks one; \"0\" disables).");
  flags.String("health-probe-bind-address", &f.probe_addr, "host:port of /healthz and /readyz.");
  flags.String("cluster-domain", &f.cluster_domain,
               "Cluster DNS domain appended to TF_CONFIG hosts.");
  flags.String("gang-scheduler", &f.gang_scheduler,
               "PodGroup flavour: volcano, scheduler-plugins, or kubernetes (kube-scheduler's "
               "own gangs: a scheduling.k8s.io/v1alpha2 Workload and PodGroup per job; "
               "Kubernetes >= 1.36 with the GenericWorkload and GangScheduling feature gates).");
  flags.Bool("network-policy", &f.network_policy,
             "Give each job whose spec.networkPolicy.enabled is unset a NetworkPolicy, created "
             "before its pods: ingress to its pods only from its own pods (on the ports TF_CONFIG "
             "lists) and to their metrics port from spec.networkPolicy.metricsFrom. Needs an "
             "enforcing network plugin to mean anything.");
  flags.Bool("kueue", &f.kueue,
             "Queue jobs labelled kueue.x-k8s.io/queue-name through Kueue (its CRDs must be "
             "installed, and its configuration must list DistributedTraining.v1.disttrain.io in "
             "integrations.externalFrameworks): one Workload per job, no pod before admission. "
             "Off: the label is ignored.");
  flags.Bool("kueue-pods-ready", &f.kueue_pods_ready,
             "With --kueue: write each Workload's PodsReady condition once every replica runs, "
             "which Kueue's waitForPodsReady needs (without it an admitted job is evicted after "
             "waitForPodsReady.timeout). Where Kueue's configuration leaves waitForPodsReady off "
             "(its default), false saves one Workload write per job, as Kueue's own job "
             "controllers do.");
  flags.Bool("tfjob", &f.tfjob,
             "Also reconcile Kubeflow TFJobs (kubeflow.org/v1) with the training-operator's "
             "semantics, in the namespaces this operator watches: its CRD must be installed, and "
             "the training-operator stopped (docs/tfjob.md). Off: TFJobs are not read.");
  flags.String("tfjob-namespace-selector", &f.tfjob_namespace_selector,
               "With --tfjob: reconcile only the TFJobs of namespaces whose labels match this "
               "label selector (e.g. disttrain.io/tfjob=enabled), so TFJobs move from the "
               "training-operator namespace by namespace; default every watched namespace.");
  flags.String("tfjob-queueing", &f.tfjob_queueing,
               "With --tfjob, who queues TFJobs labelled kueue.x-k8s.io/queue-name: operator (with "
               "--kueue, through Workloads this operator makes, as for DistributedTrainings; "
               "Kueue's kubeflow.org/tfjob integration must be off) or kueue (Kueue's built-in "
               "kubeflow.org/tfjob integration suspends and resumes them, as with the "
               "training-operator; this operator makes no Workload for TFJobs and runs what Kueue "
               "resumes). MultiKueue dispatches TFJobs only with kueue.");
  flags.Int("v", &f.verbosity, "Log level: 0 errors, 1 warnings, 2 info, 3 debug.");
  flags.Bool("version", &f.version, "Print the version and exit.");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (rest.ok() && !rest->empty()) {
    rest = absl::InvalidArgumentError(
        absl::StrCat("unknown command \"", rest->front(), "\" (see --help)"));
  }
  if (!rest.ok()) {
    std::cerr << "disttrain-operator: " << rest.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (f.version) {
    std::cout << "disttrain-operator " << Version() << "\n";
    return kExitOk;
  }
  if (f.workers < 1 || f.http_threads < 1 || f.parallel_requests < 1 || f.max_in_flight < 0 ||
      f.burst < 1 || f.qps < 0 || f.pod_event_batch_ms < 0 || f.pod_event_batch_ms > 60'000 ||
      f.progress_interval < 0 || !(f.progress_rate > 0) || f.verbosity < 0 ||
      (f.gang_scheduler != "volcano" && f.gang_scheduler != "scheduler-plugins" &&
       f.gang_scheduler != "kubernetes")) {
    std::cerr << "disttrain-operator: --workers, --http-client-threads, --parallel-requests and "
                 "--kube-api-burst must be >= 1, --kube-api-qps, --max-requests-in-flight and "
                 "--progress-interval-seconds >= 0, --progress-readings-per-second > 0, "
                 "--pod-event-batch-ms 0-60000, --gang-scheduler volcano, scheduler-plugins or "
                 "kubernetes\n";
    return kExitUsage;
  }
  if (!f.tfjob_namespace_selector.empty() && !f.tfjob) {
    std::cerr << "disttrain-operator: --tfjob-namespace-selector needs --tfjob\n";
    return kExitUsage;
  }
  if (f.tfjob_queueing != "operator" && f.tfjob_queueing != "kueue") {
    std::cerr << "disttrain-operator: --tfjob-queueing must be operator or kueue, not \""
              << f.tfjob_queueing << "\"\n";
    return kExitUsage;
  }
  if (flags.WasSet("tfjob-queueing") && !f.tfjob) {
    std::cerr << "disttrain-operator: --tfjob-queueing needs --tfjob\n";
    return kExitUsage;
  }
  SetLogLevel(static_cast<LogLevel>(std::min<int64_t>(f.verbosity, 3)));
  // glibc gives each thread that allocates its own malloc arena (up to 8 per core), and each
  // keeps its freed pages; two arenas hold the operator's heap in less resident memory
  // (docs/operations.md). MALLOC_ARENA_MAX, when set, still decides.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  // Before any request: the pool is created on first use and cannot be resized afterwards.
  crossplat::threadpool::initialize_with_threads(static_cast<size_t>(f.http_threads));

  absl::StatusOr<kube::RestConfig> config = kube::LoadConfig(f.kubeconfig, f.context);
  if (!config.ok()) {
    std::cerr << "disttrain-operator: " << config.status().message() << "\n";
    return kExitUsage;
  }
  config->qps = f.qps;
  config->burst = static_cast<int>(f.burst);
  config->max_in_flight = static_cast<int>(f.max_in_flight);
  absl::StatusOr<std::unique_ptr<kube::RestKubeClient>> client =
      kube::RestKubeClient::Create(*config);
  if (!client.ok()) {
    std::cerr << "disttrain-operator: " << client.status().message() << "\n";
    return kExitUsage;
  }

  Clock* clock = RealClock::Get();
  MetricsRegistry metrics;
  // client-go's name; a watch counts as method WATCH, a request with no response as <error>.
  MetricFamily* requests = metrics.Counter(
      "rest_client_requests_total",
      "Number of HTTP requests, partitioned by status code and method.", {"code", "method"});
  (*client)->SetRequestObserver([requests](const std::string& method, int code) {
    requests->Add({code == 0 ? "<error>" : absl::StrCat(code), method}, 1);
  });
  runtime::KubeEventRecorder event_writer((*client).get(), "disttrain-operator", clock);
  runtime::BackgroundEventRecorder recorder(&event_writer);
  // Kueue: the ResourceFlavors whose node labels and tolerations admitted pods carry.
  std::unique_ptr<runtime::Informer> flavors;
  if (f.kueue) {
    flavors = std::make_unique<runtime::Informer>(
        (*client).get(), runtime::InformerOptions{.resource = kube::kResourceFlavors});
  }
  if (!f.tfjob_namespace_selector.empty()) {
    // The API server parses the selector: a bad one is a usage error now, not a cache that
    // never syncs.
    absl::StatusOr<kube::ListResult> probe = (*client)->List(
        kube::kNamespaces, "", {.label_selector = f.tfjob_namespace_selector, .limit = 1});
    if (!probe.ok() && absl::IsInvalidArgument(probe.status())) {
      std::cerr << "disttrain-operator: --tfjob-namespace-selector \"" << f.tfjob_namespace_selector
                << "\" is not a label selector: " << probe.status().message() << "\n";
      return kExitUsage;
    }
  }
  const controller::FrontDeps deps{(*client).get(), clock, &metrics, &recorder};
  controller::FrontSettings settings;
  settings.namespace_name = f.namespace_name;
  settings.workers = static_cast<int>(f.workers);
  settings.parallel_requests = static_cast<int>(f.parallel_requests);
  settings.pod_event_batch = absl::Milliseconds(f.pod_event_batch_ms);
  settings.progress = {.interval = absl::Seconds(f.progress_interval),
                       .readings_per_second = f.progress_rate};
  settings.flavors = flavors.get();
  settings.kueue_pods_ready = f.kueue_pods_ready;
  settings.kueue_queues_tfjobs = f.tfjob_queueing == "kueue";
  settings.tfjob_namespace_selector = f.tfjob_namespace_selector;
  settings.build.cluster_domain = f.cluster_domain;
  settings.build.network_policy = f.network_policy;
  if (f.progress_interval > 0) settings.build.progress_reader_namespace = InClusterNamespace();
  settings.build.gang_scheduler = f.gang_scheduler == "volcano" ? policy::GangScheduler::kVolcano
                                  : f.gang_scheduler == "kubernetes"
                                      ? policy::GangScheduler::kKubernetes
                                      : policy::GangScheduler::kSchedulerPlugins;
  std::vector<std::unique_ptr<controller::Front>> fronts;
  fronts.push_back(
      std::make_unique<controller::Front>(deps, controller::DistributedTrainingApi(), settings));
  if (f.tfjob) {
    fronts.push_back(std::make_unique<controller::Front>(deps, controller::TfJobApi(), settings));
  }

  runtime::ManagerOptions options;
  options.metrics_bind_address = f.metrics_addr;
  options.health_probe_bind_address = f.probe_addr;
  if (f.leader_elect) {
    runtime::LeaderElectionConfig le;
    le.namespace_name =
        f.leader_election_namespace.empty() ? PodNamespace() : f.leader_election_namespace;
    le.name = f.leader_election_id;
    le.identity = Identity();
    options.leader_election = le;
  }
  runtime::Manager manager(options, (*client).get(), &metrics, clock);
  if (flavors) manager.AddInformer(flavors.get());
  for (const std::unique_ptr<controller::Front>& front : fronts) front->AddTo(&manager);

  std::thread signal_thread([&manager, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    LogInfo("received a stop signal, shutting down",
            {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    manager.RequestStop();
  });
  signal_thread.detach();

  LogInfo("starting disttrain-operator",
          {{"version", Version()},
           {"server", config->server},
           {"namespace", f.namespace_name.empty() ? "(all)" : f.namespace_name},
           {"workers", absl::StrCat(f.workers)},
           {"leader_elect", f.leader_elect ? "true" : "false"},
           {"kueue", f.kueue ? "true" : "false"},
           {"kueue_pods_ready", f.kueue_pods_ready ? "true" : "false"},
           {"tfjob", f.tfjob ? "true" : "false"},
           {"tfjob_namespace_selector", f.tfjob_namespace_selector},
           {"tfjob_queueing", f.tfjob_queueing}});
  absl::Status status = manager.Run();
  if (!status.ok()) {
    LogError("operator stopped", {{"error", status.ToString()}});
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built to track every Mutex's lock order (a debug aid: 177 against 97 ns
  // per contended lock pair, measured). Off in the shipped binaries; the tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "render") {
    return disttrain::cli::RunRender({args.begin() + 1, args.end()}, std::cout, std::cerr);
  }
  return RunController(args);
}
