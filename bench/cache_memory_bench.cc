// What each of the operator's caches costs per 1,000 objects (issue #39): the heap bytes a
// runtime::Store holds once filled with N objects as the operator's informers would cache them,
// measured with glibc's mallinfo2 (bytes in use) before and after.
//
//   jobs       DistributedTrainings of 7 replicas with a running job's status, metadata
//              stripped as the informer does; CBOR-encoded as cached, and as nlohmann trees
//   pods       the operator's own pods (BuildDesiredObjects: full TF_CONFIG, labels, owner
//              reference) dressed as the API server returns them (defaults, volumes, status:
//              the captured fixture tests/unit/operator/controller/testdata/running.json),
//              projected (policy::ProjectPod) and CBOR-encoded, as cached
//   services   their Services, projected and CBOR-encoded
// and, for comparison, the same pods and Services kept whole as trees (what an informer that
// caches every field would hold).
//
//   cache_memory_bench --fixtures DIR [--objects N]
// Prints one JSON line.
#include <malloc.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "nlohmann/json.hpp"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/policy/desired_objects.h"
#include "operator/policy/pod_projection.h"
#include "operator/runtime/informer.h"
#include "operator/runtime/store.h"

namespace {

using disttrain::runtime::Store;
using disttrain::runtime::StoreEncoding;
using disttrain::runtime::StripMetadata;
using nlohmann::json;

size_t HeapInUse() { return mallinfo2().uordblks; }

json Load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

json Role(int replicas) {
  return {{"replicas", replicas},
          {"template",
           {{"spec",
             {{"containers",
               {{{"name", "tensorflow"},
                 {"image", "registry.example/trainer:1"},
                 {"resources", {{"requests", {{"cpu", "100m"}}}}}}}}}}}}};
}

// A 7-replica job as the API server returns it while it runs.
json Job(int i) {
  const std::string name = absl::StrCat("job-", i);
  json conditions = json::array();
  for (const char* type : {"Created", "Running"}) {
    conditions.push_back({{"type", type},
                          {"status", "True"},
                          {"reason", absl::StrCat("Job", type)},
                          {"message", absl::StrCat("the job is ", type)},
                          {"lastTransitionTime", "2026-11-27T03:00:00Z"},
                          {"lastUpdateTime", "2026-11-27T03:00:00Z"}});
  }
  json replica_statuses;
  for (auto [role, n] : {std::pair{"Chief", 1}, {"PS", 2}, {"Worker", 3}, {"Evaluator", 1}}) {
    replica_statuses[role] = {{"active", n}, {"progress", absl::StrCat(n, "/", n)}};
  }
  return {{"apiVersion", "disttrain.io/v1"},
          {"kind", "DistributedTraining"},
          {"metadata",
           {{"name", name},
            {"namespace", "bench"},
            {"uid", absl::StrCat("00000000-0000-0000-0000-", 100000000000 + i)},
            {"resourceVersion", absl::StrCat(1000000 + i)},
            {"generation", 1},
            {"creationTimestamp", "2026-11-27T03:00:00Z"}}},
          {"spec",
           {{"replicaSpecs",
             {{"Chief", Role(1)}, {"PS", Role(2)}, {"Worker", Role(3)}, {"Evaluator", Role(1)}}}}},
          {"status",
           {{"conditions", conditions},
            {"state", "Running"},
            {"replicaStatuses", replica_statuses},
            {"startTime", "2026-11-27T03:00:00Z"},
            {"observedGeneration", 1},
            {"workerSelector", "disttrain.io/job-name=job,disttrain.io/replica-type=worker"}}}};
}

// Heap bytes `fill` leaves behind (the store's content; temporaries are freed inside).
size_t Measure(const std::function<void()>& fill) {
  const size_t before = HeapInUse();
  fill();
  const size_t after = HeapInUse();
  return after > before ? after - before : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures = "tests/unit/operator/controller/testdata";
  int64_t objects = 1000;
  disttrain::FlagSet flags("cache_memory_bench --fixtures DIR [--objects N]");
  flags.String("fixtures", &fixtures, "Folder of running.json and service-running.json.");
  flags.Int("objects", &objects, "Jobs to cache (7 pods and their Service each).");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse({argv + 1, argv + argc});
  if (!rest.ok() || flags.help_requested() || objects < 1) {
    std::cerr << (rest.ok() ? flags.Help() : std::string(rest.status().message())) << "\n";
    return rest.ok() && objects >= 1 ? 0 : 2;
  }
  const json pod_fixture = Load(fixtures + "/running.json");
  const json service_fixture = Load(fixtures + "/service-running.json");

  auto desired_of = [&](int i) {
    absl::StatusOr<disttrain::api::DistributedTraining> job = disttrain::api::DecodeJob(Job(i));
    if (!job.ok()) {
      std::cerr << job.status() << "\n";
      std::exit(1);
    }
    disttrain::api::ApplyDefaults(&*job);
    absl::StatusOr<disttrain::policy::DesiredObjects> desired =
        disttrain::policy::BuildDesiredObjects(*job, disttrain::policy::BuildOptions{});
    if (!desired.ok()) {
      std::cerr << desired.status() << "\n";
      std::exit(1);
    }
    return *std::move(desired);
  };
  // The pods of job i, as the API server returns them.
  auto pods_of = [&](int i, const std::function<void(json pod)>& each) {
    int k = 0;
    for (disttrain::policy::ReplicaObjects& r : desired_of(i).replicas) {
      json pod = pod_fixture;
      pod["metadata"]["name"] = r.pod["metadata"]["name"];
      pod["metadata"]["namespace"] = "bench";
      pod["metadata"]["labels"] = r.pod["metadata"]["labels"];
      pod["metadata"]["ownerReferences"] = r.pod["metadata"]["ownerReferences"];
      pod["metadata"]["uid"] = absl::StrCat("10000000-0000-0000-0000-", 100000000000 + 7 * i + k);
      pod["spec"]["containers"][0]["env"] = r.pod["spec"]["containers"][0]["env"];
      pod["spec"]["containers"][0]["ports"] = r.pod["spec"]["containers"][0]["ports"];
      each(std::move(pod));
      ++k;
    }
  };
  // Its Services (the job's, or one per replica), likewise.
  auto services_of = [&](int i, const std::function<void(json service)>& each) {
    disttrain::policy::DesiredObjects desired = desired_of(i);
    std::vector<json> built;
    if (desired.job_service) built.push_back(*desired.job_service);
    for (const disttrain::policy::ReplicaObjects& r : desired.replicas) {
      if (!r.service.is_null()) built.push_back(r.service);
    }
    for (const json& b : built) {
      json service = service_fixture;
      service["metadata"]["name"] = b["metadata"]["name"];
      service["metadata"]["namespace"] = "bench";
      service["metadata"]["labels"] = b["metadata"]["labels"];
      service["metadata"]["ownerReferences"] = b["metadata"]["ownerReferences"];
      service["spec"]["selector"] = b["spec"]["selector"];
      service["spec"]["ports"] = b["spec"]["ports"];
      each(std::move(service));
    }
  };

  const int n = static_cast<int>(objects);
  Store jobs(StoreEncoding::kCbor), pods(StoreEncoding::kCbor), services(StoreEncoding::kCbor);
  Store tree_jobs, whole_pods, whole_services;
  const size_t job_bytes = Measure([&] {
    for (int i = 0; i < n; ++i) jobs.Upsert(std::make_shared<const json>(StripMetadata(Job(i))));
  });
  const size_t tree_job_bytes = Measure([&] {
    for (int i = 0; i < n; ++i)
      tree_jobs.Upsert(std::make_shared<const json>(StripMetadata(Job(i))));
  });
  const size_t pod_bytes = Measure([&] {
    for (int i = 0; i < n; ++i) {
      pods_of(i, [&](json pod) {
        pods.Upsert(std::make_shared<const json>(
            disttrain::policy::ProjectPod(StripMetadata(std::move(pod)))));
      });
    }
  });
  const size_t service_bytes = Measure([&] {
    for (int i = 0; i < n; ++i) {
      services_of(i, [&](json service) {
        services.Upsert(std::make_shared<const json>(
            disttrain::policy::ProjectService(StripMetadata(std::move(service)))));
      });
    }
  });
  const size_t whole_pod_bytes = Measure([&] {
    for (int i = 0; i < n; ++i) {
      pods_of(i, [&](json pod) {
        whole_pods.Upsert(std::make_shared<const json>(StripMetadata(std::move(pod))));
      });
    }
  });
  const size_t whole_service_bytes = Measure([&] {
    for (int i = 0; i < n; ++i) {
      services_of(i, [&](json service) {
        whole_services.Upsert(std::make_shared<const json>(StripMetadata(std::move(service))));
      });
    }
  });
  auto per_1000 = [&](size_t bytes, size_t count) {
    return std::round(bytes * 1000.0 / count / 1024.0 * 10) / 10;  // KiB per 1,000 objects
  };
  json out = {
      {"bench", "cache_memory"},
      {"jobs", n},
      {"pods", pods.Size()},
      {"services", services.Size()},
      {"jobs_cbor_kib_per_1000", per_1000(job_bytes, jobs.Size())},
      {"jobs_tree_kib_per_1000", per_1000(tree_job_bytes, tree_jobs.Size())},
      {"pods_cbor_projection_kib_per_1000", per_1000(pod_bytes, pods.Size())},
      {"services_cbor_projection_kib_per_1000", per_1000(service_bytes, services.Size())},
      {"pods_whole_tree_kib_per_1000", per_1000(whole_pod_bytes, whole_pods.Size())},
      {"services_whole_tree_kib_per_1000", per_1000(whole_service_bytes, whole_services.Size())},
      {"per_1000_jobs_mib",
       std::round((job_bytes + pod_bytes + service_bytes) * 1000.0 / n / (1 << 20) * 100) / 100}};
  std::cout << out.dump() << "\n";
  return 0;
}
