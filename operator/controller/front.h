// One API front wired (job_api.h): its jobs', pods' and Services' informers (and, as the
// operator's settings ask, its Kueue Workloads' and namespaces'), its work queue, its
// reconciler and its controller. DistributedTraining and TFJob each get one; both run the same
// engine. operator/main.cc turns its flags into FrontSettings and adds each front to the
// manager. Built once at start; the manager runs it.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_FRONT_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_FRONT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "operator/controller/job_api.h"
#include "operator/controller/job_reconciler.h"
#include "operator/kube/kube_client.h"
#include "operator/policy/build_options.h"
#include "operator/progress/progress_tracker.h"
#include "operator/runtime/controller.h"
#include "operator/runtime/event_recorder.h"
#include "operator/runtime/informer.h"
#include "operator/runtime/manager.h"
#include "operator/runtime/work_queue.h"

namespace disttrain::controller {

// The operator's settings every front reads (its flags).
struct FrontSettings {
  std::string namespace_name;  // "" watches every namespace
  int workers = 6;             // jobs reconciled in parallel, per front
  int parallel_requests = 4;
  absl::Duration pod_event_batch = absl::Milliseconds(500);
  // --kueue: the ResourceFlavors' informer, shared by the fronts; null without Kueue.
  runtime::Informer* flavors = nullptr;
  bool kueue_pods_ready = true;
  // --tfjob-queueing=kueue: Kueue's own kubeflow.org/tfjob integration queues TFJobs by
  // suspending them, so the TFJob front makes no Workload and runs what Kueue resumes.
  bool kueue_queues_tfjobs = false;
  // --tfjob-namespace-selector: TFJobs only in the namespaces whose labels match it.
  std::string tfjob_namespace_selector;
  policy::BuildOptions build;
  // --progress-interval, --progress-readings-per-second: DistributedTrainings' status.progress
  // (operator/progress/); an interval of zero reads none.
  progress::ProgressSettings progress;
};

// What a front needs from the process.
struct FrontDeps {
  kube::KubeClient* client = nullptr;
  Clock* clock = nullptr;
  MetricsRegistry* metrics = nullptr;
  runtime::EventRecorder* events = nullptr;
};

class Front {
 public:
  Front(const FrontDeps& deps, const JobApi& api, const FrontSettings& settings);

  // Adds its informers and its controller to `manager`.
  void AddTo(runtime::Manager* manager);

  // Its informers, in the order AddTo adds them.
  std::vector<const runtime::Informer*> informers() const;

 private:
  const std::string selector_;
  runtime::Informer jobs_, pods_, services_;
  std::unique_ptr<runtime::Informer> workloads_, namespaces_;
  runtime::WorkQueue queue_;
  std::unique_ptr<progress::MetricsFetcher> fetcher_;
  std::unique_ptr<progress::ProgressTracker> progress_;
  std::unique_ptr<JobMetrics> job_metrics_;
  std::unique_ptr<JobReconciler> reconciler_;
  std::unique_ptr<runtime::Controller> controller_;
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_FRONT_H_
