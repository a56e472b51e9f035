#include "operator/controller/front.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "operator/api/labels.h"
#include "operator/controller/job_events.h"
#include "operator/policy/pod_projection.h"
#include "operator/progress/http_metrics_fetcher.h"
#include "operator/queueing/workload.h"

namespace disttrain::controller {

Front::Front(const FrontDeps& d, const JobApi& api, const FrontSettings& s)
    : selector_(absl::StrCat(api.kind->labels.owner_key, "=", api.kind->labels.owner_value)),
      // Jobs CBOR-encoded too: a job of 7 replicas is ~13 KB as a tree and ~2 KB encoded
      // (bench/cache_memory_bench.cc); at 10,000 jobs the trees alone took ~130 MB. A pass
      // decodes its job once (~30 us).
      jobs_(d.client, {.resource = *api.resource,
                       .namespace_name = s.namespace_name,
                       .store_encoding = runtime::StoreEncoding::kCbor}),
      pods_(d.client, {.resource = kube::kPods,
                       .namespace_name = s.namespace_name,
                       .label_selector = selector_,
                       .transform = policy::ProjectPod,
                       .decode_protobuf = policy::DecodePodProjection,
                       .store_encoding = runtime::StoreEncoding::kCbor}),
      services_(d.client, {.resource = kube::kServices,
                           .namespace_name = s.namespace_name,
                           .label_selector = selector_,
                           .transform = policy::ProjectService,
                           .decode_protobuf = policy::DecodeServiceProjection,
                           .store_encoding = runtime::StoreEncoding::kCbor}),
      queue_({.name = absl::AsciiStrToLower(api.kind->kind)}, d.clock, d.metrics) {
  const bool tfjob = api.kind == &api::kTfJobKind;
  // Kueue: the Workloads this operator made (they carry its managed-by label, whichever
  // front's job owns them), each front's own by their job-kind label.
  if (s.flavors != nullptr && !(tfjob && s.kueue_queues_tfjobs)) {
    workloads_ = std::make_unique<runtime::Informer>(
        d.client, runtime::InformerOptions{
                      .resource = kube::kWorkloads,
                      .namespace_name = s.namespace_name,
                      .label_selector = absl::StrCat(
                          api::kLabelManagedBy, "=", api::kManagedByValue, ",",
                          queueing::kJobKindLabel, tfjob ? "=" : "!=", api::kTfJobKind.kind),
                      .transform = queueing::ProjectWorkload,
                      .store_encoding = runtime::StoreEncoding::kCbor});
  }
  ReconcilerDeps deps;
  deps.api = &api;
  deps.parallel_requests = s.parallel_requests;
  deps.client = d.client;
  deps.jobs = &jobs_.store();
  deps.pods = &pods_.store();
  deps.services = &services_.store();
  // TFJobs in the namespaces a label selector picks (a migration namespace by namespace).
  if (tfjob && !s.tfjob_namespace_selector.empty()) {
    namespaces_ = std::make_unique<runtime::Informer>(
        d.client, runtime::InformerOptions{.resource = kube::kNamespaces,
                                           .label_selector = s.tfjob_namespace_selector});
    deps.namespaces = &namespaces_->store();
  }
  if (workloads_) {
    deps.workloads = &workloads_->store();
    deps.flavors = &s.flavors->store();
    deps.kueue_pods_ready = s.kueue_pods_ready;
  }
  deps.events = d.events;
  deps.clock = d.clock;
  deps.build = s.build;
  // A TFJob's status has no field for it (the training-operator's CRD).
  if (!tfjob && s.progress.interval > absl::ZeroDuration()) {
    fetcher_ = std::make_unique<progress::HttpMetricsFetcher>();
    progress_ =
        std::make_unique<progress::ProgressTracker>(fetcher_.get(), d.clock, s.progress, d.metrics);
    progress_->SetNotify([this](const std::string& key) { queue_.Add(key); });
    deps.progress = progress_.get();
  }
  if (d.metrics != nullptr) {
    job_metrics_ = std::make_unique<JobMetrics>(d.metrics);
    deps.job_metrics = job_metrics_.get();
  }
  reconciler_ = std::make_unique<JobReconciler>(deps);
  jobs_.AddHandler(EnqueueJobs(&queue_));
  pods_.AddHandler(EnqueuePodOwners(&queue_, s.pod_event_batch));
  JobReconciler* r = reconciler_.get();
  pods_.AddHandler({[r](const runtime::ObjectPtr& o) { r->Saw("pods", *o); }, nullptr,
                    [r](const runtime::ObjectPtr& o) {
                      r->ForgetPod(o->value("/metadata/uid"_json_pointer, ""));
                      r->Saw("pods", *o);
                    }});
  services_.AddHandler(EnqueueServiceOwners(&queue_));
  services_.AddHandler({[r](const runtime::ObjectPtr& o) { r->Saw("services", *o); }, nullptr,
                        [r](const runtime::ObjectPtr& o) { r->Saw("services", *o); }});
  if (workloads_) workloads_->AddHandler(EnqueueWorkloadOwners(&queue_));
  if (namespaces_) namespaces_->AddHandler(EnqueueNamespaceJobs(&queue_, &jobs_.store()));
  controller_ = std::make_unique<runtime::Controller>(absl::AsciiStrToLower(api.kind->kind), r,
                                                      &queue_, s.workers, d.metrics);
}

std::vector<const runtime::Informer*> Front::informers() const {
  std::vector<const runtime::Informer*> out = {&jobs_, &pods_, &services_};
  if (workloads_) out.push_back(workloads_.get());
  if (namespaces_) out.push_back(namespaces_.get());
  return out;
}

void Front::AddTo(runtime::Manager* manager) {
  for (runtime::Informer* i : {&jobs_, &pods_, &services_, workloads_.get(), namespaces_.get()}) {
    if (i != nullptr) manager->AddInformer(i);
  }
  manager->AddController(controller_.get());
  if (progress_) manager->AddRunnable(progress_.get());
}

}  // namespace disttrain::controller
