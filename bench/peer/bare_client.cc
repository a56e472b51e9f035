// The API server's own limit for the peer benchmark: the Services and Pods of N 7-pod jobs
// created by a minimal client with T threads and no client-side rate limit, so an operator's
// creation time reads as a ratio to what this machine's API server can take.
//   bare_client --kubeconfig FILE --namespace NS --jobs 100 --threads 16
//   bare_client --kubeconfig FILE --namespace NS --from-jobs --threads 16
// --from-jobs lists the DistributedTrainings in NS (created beforehand, with no operator running)
// and creates for each exactly the Services and Pods our operator builds for it (the operator's
// own builders with its default options: same labels, owner references, TF_CONFIG), so the
// baseline creates the objects the operator would. Without it, simplified objects (no owner, a
// stub TF_CONFIG).
// Prints one JSON line: {"objects":..,"seconds":..,"threads":..,"errors":..}.
#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/kube/config.h"
#include "operator/kube/errors.h"
#include "operator/kube/rest_kube_client.h"
#include "operator/policy/desired_objects.h"

namespace {

using nlohmann::json;
using namespace disttrain;  // NOLINT: a benchmark tool

// What the operators create for one replica: a headless Service and a Pod with TF_CONFIG.
std::pair<json, json> Replica(const std::string& job, const std::string& role, int index) {
  const std::string name = absl::StrCat(job, "-", role, "-", index);
  json labels = {{"bench.disttrain.io/job", job},
                 {"bench.disttrain.io/role", role},
                 {"bench.disttrain.io/index", absl::StrCat(index)}};
  json service = {{"apiVersion", "v1"},
                  {"kind", "Service"},
                  {"metadata", {{"name", name}, {"labels", labels}}},
                  {"spec",
                   {{"clusterIP", "None"},
                    {"publishNotReadyAddresses", true},
                    {"selector", labels},
                    {"ports", {{{"name", "tfjob-port"}, {"port", 2222}}}}}}};
  json annotations = json::object();
  if (role == "chief") {
    annotations = {{"test.disttrain.io/exit-code", "0"}, {"test.disttrain.io/run-seconds", "15"}};
  }
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", labels}, {"annotations", annotations}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"hostname", name},
                {"subdomain", name},
                {"containers",
                 {{{"name", "tensorflow"},
                   {"image", "registry.example/trainer:1"},
                   {"resources", {{"requests", {{"cpu", "100m"}}}}},
                   {"ports", {{{"name", "tfjob-port"}, {"containerPort", 2222}}}},
                   {"env", {{{"name", "TF_CONFIG"}, {"value", "{\"cluster\":{}}"}}}}}}}}}};
  return {service, pod};
}

// What our operator creates for every DistributedTraining in `ns`: its builders' output.
absl::Status OperatorObjects(kube::KubeClient* client, const std::string& ns,
                             std::vector<std::pair<const kube::Resource*, json>>* objects) {
  absl::StatusOr<kube::ListResult> list = client->List(kube::kDistributedTrainings, ns, {});
  if (!list.ok()) return list.status();
  for (const json& item : list->items) {
    absl::StatusOr<api::DistributedTraining> job = api::DecodeJob(item);
    if (!job.ok()) return job.status();
    api::ApplyDefaults(&*job);
    absl::StatusOr<policy::DesiredObjects> desired =
        policy::BuildDesiredObjects(*job, policy::BuildOptions{});
    if (!desired.ok()) return desired.status();
    if (desired->job_service) objects->emplace_back(&kube::kServices, *desired->job_service);
    for (policy::ReplicaObjects& r : desired->replicas) {
      if (!r.service.is_null()) objects->emplace_back(&kube::kServices, std::move(r.service));
      objects->emplace_back(&kube::kPods, std::move(r.pod));
    }
  }
  if (objects->empty()) return absl::NotFoundError("no DistributedTraining in the namespace");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig, ns = "default";
  int64_t jobs = 100, threads = 16;
  FlagSet flags("bare_client --kubeconfig FILE --namespace NS [--jobs N] [--threads T]");
  flags.String("kubeconfig", &kubeconfig, "Kubeconfig of the cluster.");
  flags.String("namespace", &ns, "Namespace to create the objects in.");
  flags.Int("jobs", &jobs, "7-pod jobs whose Services and Pods to create.");
  flags.Int("threads", &threads, "Requests in flight at once.");
  bool from_jobs = false;
  flags.Bool("from-jobs", &from_jobs,
             "Create the operator's own objects for the DistributedTrainings in the namespace.");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse({argv + 1, argv + argc});
  if (!rest.ok() || flags.help_requested()) {
    std::cerr << (rest.ok() ? flags.Help() : std::string(rest.status().message())) << "\n";
    return rest.ok() ? 0 : 2;
  }
  absl::StatusOr<kube::RestConfig> config = kube::LoadConfig(kubeconfig, "");
  if (!config.ok()) {
    std::cerr << config.status() << "\n";
    return 1;
  }
  config->qps = 1e6;  // no client-side limit: the API server is the limit
  config->burst = 1000000;
  config->user_agent = "disttrain-bench-bare-client";
  absl::StatusOr<std::unique_ptr<kube::RestKubeClient>> client =
      kube::RestKubeClient::Create(*config);
  if (!client.ok()) {
    std::cerr << client.status() << "\n";
    return 1;
  }
  std::vector<std::pair<const kube::Resource*, json>> objects;
  if (from_jobs) {
    absl::Status s = OperatorObjects(client->get(), ns, &objects);
    if (!s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
    jobs = 0;  // the roles below are not added
  }
  const std::vector<std::pair<std::string, int>> roles = {
      {"chief", 1}, {"ps", 2}, {"worker", 3}, {"evaluator", 1}};
  for (int j = 0; j < jobs; ++j) {
    for (const auto& [role, n] : roles) {
      for (int i = 0; i < n; ++i) {
        auto [service, pod] = Replica(absl::StrCat("bare-", j), role, i);
        objects.emplace_back(&kube::kServices, service);
        objects.emplace_back(&kube::kPods, pod);
      }
    }
  }
  std::atomic<size_t> next{0};
  std::atomic<int> errors{0};
  const absl::Time start = absl::Now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < objects.size(); i = next++) {
        absl::StatusOr<json> r = (*client)->Create(*objects[i].first, ns, objects[i].second);
        if (!r.ok() && !kube::IsAlreadyExists(r.status())) {
          if (errors++ == 0) std::cerr << r.status() << "\n";
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::cout << json{{"objects", objects.size()},
                    {"seconds", seconds},
                    {"threads", threads},
                    {"errors", errors.load()}}
                   .dump()
            << "\n";
  return errors.load() == 0 ? 0 : 1;
}
