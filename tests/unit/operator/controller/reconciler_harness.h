// The reconciler on a fake API server, for the reconciler suites: the harness plays the informers
// (Sync copies the fake's objects into the stores) and the kubelet (SetPod writes a pod's
// status); time is a FakeClock. The job under test is "default/dist".
#ifndef DISTTRAIN_TESTS_UNIT_OPERATOR_CONTROLLER_RECONCILER_HARNESS_H_
#define DISTTRAIN_TESTS_UNIT_OPERATOR_CONTROLLER_RECONCILER_HARNESS_H_

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operator/api/codec.h"
#include "operator/controller/job_reconciler.h"
#include "operator/kube/errors.h"
#include "operator/kube/resource.h"
#include "operator/policy/conditions.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::controller::testing {

using nlohmann::json;
using runtime::EventType;

class RecordingEvents : public runtime::EventRecorder {
 public:
  void Record(const json&, EventType, const std::string& reason,
              const std::string& message) override {
    absl::MutexLock lock(&mu_);
    reasons_.push_back(reason);
    messages_.push_back(message);
  }
  int Count(const std::string& reason) const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(std::count(reasons_.begin(), reasons_.end(), reason));
  }
  // Every event so far, "Reason: message", in order.
  std::vector<std::string> All() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> all;
    for (size_t i = 0; i < reasons_.size(); ++i) all.push_back(reasons_[i] + ": " + messages_[i]);
    return all;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> reasons_;
  std::vector<std::string> messages_;
};

inline json Role(int replicas, const std::string& restart_policy) {
  return {{"replicas", replicas},
          {"restartPolicy", restart_policy},
          {"template",
           {{"spec", {{"containers", {{{"name", "tensorflow"}, {"image", "trainer:1"}}}}}}}}};
}

// Chief + 1 PS + 2 workers, restartPolicy OnFailure, backoffLimit 3.
inline json JobJson(json run_policy = json::object()) {
  if (!run_policy.contains("backoffLimit")) run_policy["backoffLimit"] = 3;
  return {{"apiVersion", "disttrain.io/v1"},
          {"kind", "DistributedTraining"},
          {"metadata",
           {{"name", "dist"}, {"namespace", "default"}, {"uid", "job-uid"}, {"generation", 1}}},
          {"spec",
           {{"runPolicy", run_policy},
            {"replicaSpecs",
             {{"Chief", Role(1, "OnFailure")},
              {"PS", Role(1, "OnFailure")},
              {"Worker", Role(2, "OnFailure")}}}}}};
}

class Harness {
 public:
  // `kueue`: the operator runs with --kueue (Workload and ResourceFlavor caches).
  explicit Harness(json job = JobJson(), bool kueue = false) {
    client.Put(kube::kDistributedTrainings, std::move(job));
    kueue_ = kueue;
    reconciler = std::make_unique<JobReconciler>(Deps());
  }

  // What the reconciler is built with: the harness's fakes and caches.
  ReconcilerDeps Deps() {
    ReconcilerDeps deps;
    if (kueue_) {
      deps.workloads = &workloads;
      deps.flavors = &flavors;
    }
    deps.client = &client;
    deps.jobs = &jobs;
    deps.pods = &pods;
    deps.services = &services;
    deps.events = &events;
    deps.clock = &clock;
    deps.progress = progress;
    deps.job_metrics = job_metrics;
    return deps;
  }
  // Reads progress through `tracker` from now on.
  void UseProgress(progress::ProgressTracker* tracker) {
    progress = tracker;
    reconciler = std::make_unique<JobReconciler>(Deps());
  }

  // Exports each job's series through `metrics` from now on.
  void UseJobMetrics(JobMetrics* metrics) {
    job_metrics = metrics;
    reconciler = std::make_unique<JobReconciler>(Deps());
  }

  // The informers catch up, then one pass runs.
  absl::StatusOr<runtime::ReconcileResult> Pass() {
    Sync();
    return reconciler->Reconcile("default/dist");
  }
  // Passes until one succeeds (at most `n`).
  void Converge(int n = 5) {
    for (int i = 0; i < n; ++i) {
      if (Pass().ok()) return;
    }
    FAIL() << "no pass succeeded in " << n;
  }
  void Sync() {
    Fill(&jobs, kube::kDistributedTrainings);
    Fill(&pods, kube::kPods);
    Fill(&services, kube::kServices);
    Fill(&workloads, kube::kWorkloads);
    Fill(&flavors, kube::kResourceFlavors);
  }

  // The kubelet's part: phase, readiness, main container exit code and restarts.
  void SetPod(const std::string& name, const std::string& phase, int exit_code = 0,
              int restarts = 0, std::optional<bool> ready = std::nullopt) {
    absl::StatusOr<json> pod = client.Get(kube::kPods, "default", name);
    ASSERT_TRUE(pod.ok()) << name;
    const bool is_ready = ready.value_or(phase == "Running");
    json status = {{"phase", phase},
                   {"conditions", {{{"type", "Ready"}, {"status", is_ready ? "True" : "False"}}}}};
    json cs = {{"name", "tensorflow"}, {"restartCount", restarts}};
    if (phase == "Succeeded" || phase == "Failed") {
      cs["state"] = {
          {"terminated",
           {{"exitCode", exit_code}, {"reason", exit_code == 0 ? "Completed" : "Error"}}}};
    }
    status["containerStatuses"] = json::array({cs});
    if (phase == "Running") status["podIP"] = PodIp(name);
    (*pod)["status"] = status;
    client.Put(kube::kPods, *pod);
  }
  // The main container's termination message (after SetPod to a terminated phase).
  void SetTerminationMessage(const std::string& name, const std::string& message) {
    absl::StatusOr<json> pod = client.Get(kube::kPods, "default", name);
    ASSERT_TRUE(pod.ok()) << name;
    (*pod)["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = message;
    client.Put(kube::kPods, *pod);
  }
  // The scheduler's part for a pod it cannot place: PodScheduled False with its message.
  void SetUnschedulable(const std::string& name, const std::string& message) {
    absl::StatusOr<json> pod = client.Get(kube::kPods, "default", name);
    ASSERT_TRUE(pod.ok()) << name;
    (*pod)["status"] = {{"phase", "Pending"},
                        {"conditions",
                         {{{"type", "PodScheduled"},
                           {"status", "False"},
                           {"reason", "Unschedulable"},
                           {"message", message}}}}};
    client.Put(kube::kPods, *pod);
  }
  // A running pod's IP: 10.0.0.<its place among the job's pods>.
  std::string PodIp(const std::string& name) {
    const std::vector<std::string> names = PodNames();
    const auto it = std::find(names.begin(), names.end(), name);
    return "10.0.0." + std::to_string(1 + (it - names.begin()));
  }
  void RunAll() {
    for (const std::string& name : PodNames()) SetPod(name, "Running");
  }

  api::JobStatus Status() {
    absl::StatusOr<json> job = client.Get(kube::kDistributedTrainings, "default", "dist");
    EXPECT_TRUE(job.ok());
    if (!job.ok() || !job->contains("status")) return {};
    absl::StatusOr<api::JobStatus> st = api::DecodeStatus((*job)["status"]);
    EXPECT_TRUE(st.ok()) << st.status();
    return st.ok() ? *st : api::JobStatus{};
  }
  std::string State() { return Status().state; }
  int Restarts() {
    int total = 0;
    for (const auto& [type, rs] : Status().replica_statuses) total += rs.restarts;
    return total;
  }
  bool Condition(const char* type) { return policy::IsTrue(Status(), type); }

  std::vector<std::string> PodNames() const {
    std::vector<std::string> out;
    for (const json& p : client.Objects(kube::kPods)) out.push_back(p["metadata"]["name"]);
    return out;
  }
  bool HasPod(const std::string& name) const {
    return client.Get(kube::kPods, "default", name).ok();
  }
  std::string Uid(const std::string& name) const {
    absl::StatusOr<json> pod = client.Get(kube::kPods, "default", name);
    return pod.ok() ? (*pod)["metadata"]["uid"].get<std::string>() : "";
  }
  int Requests(const std::string& verb, const std::string& resource) const {
    int n = 0;
    for (const auto& a : client.actions()) n += a.verb == verb && a.resource == resource;
    return n;
  }

  mutable disttrain::testing::FakeKubeClient client;
  FakeClock clock;
  runtime::Store jobs, pods{runtime::StoreEncoding::kCbor}, services{runtime::StoreEncoding::kCbor};
  runtime::Store workloads, flavors;
  RecordingEvents events;
  std::unique_ptr<JobReconciler> reconciler;
  progress::ProgressTracker* progress = nullptr;
  JobMetrics* job_metrics = nullptr;

 private:
  bool kueue_ = false;
  void Fill(runtime::Store* store, const kube::Resource& r) {
    std::vector<runtime::ObjectPtr> objects;
    for (json& o : client.Objects(r)) objects.push_back(std::make_shared<const json>(std::move(o)));
    // The operator's pod and Service informers tell the reconciler what they show (main.cc).
    if (reconciler != nullptr && (&r == &kube::kPods || &r == &kube::kServices)) {
      for (const runtime::ObjectPtr& o : objects) {
        reconciler->Saw(&r == &kube::kPods ? "pods" : "services", *o);
      }
    }
    store->Replace(std::move(objects));
  }
};

inline const std::vector<std::string> kAllPods = {"dist-chief-0", "dist-ps-0", "dist-worker-0",
                                                  "dist-worker-1"};

// A job with a schedulingPolicy (a PodGroup, Volcano's by default).
inline json GangJob() {
  json job = JobJson();
  job["spec"]["runPolicy"]["schedulingPolicy"] = json::object();
  return job;
}

// The job scaled to `replicas` workers, as `kubectl scale` does (a new generation).
inline void ScaleWorkers(Harness& h, int replicas) {
  absl::StatusOr<json> job = h.client.Get(kube::kDistributedTrainings, "default", "dist");
  ASSERT_TRUE(job.ok());
  (*job)["spec"]["replicaSpecs"]["Worker"]["replicas"] = replicas;
  (*job)["metadata"]["generation"] = (*job)["metadata"]["generation"].get<int>() + 1;
  h.client.Put(kube::kDistributedTrainings, *job);
}

}  // namespace disttrain::controller::testing

#endif  // DISTTRAIN_TESTS_UNIT_OPERATOR_CONTROLLER_RECONCILER_HARNESS_H_
