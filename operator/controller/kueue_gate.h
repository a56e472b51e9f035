// Kueue as a queue gate (queue_gate.h): a job labelled kueue.x-k8s.io/queue-name gets one
// Workload and runs no pod until Kueue admits it; its pods then carry what the admission
// assigns; an eviction stops them and gives the quota back once they are gone; the Workload
// learns PodsReady, reclaimablePods and Finished from the job. MultiKueue, both ends: in the
// manager cluster a job with spec.managedBy kueue.x-k8s.io/multikueue gets its Workload and
// nothing else (Forward); in a worker cluster the copy MultiKueue made adopts the Workload
// MultiKueue prebuilt for it (kueue_gate_multikueue.cc). What Kueue's objects say is read by
// operator/queueing/; see docs/kueue.md. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_KUEUE_GATE_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_KUEUE_GATE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "operator/controller/expectations.h"
#include "operator/controller/queue_gate.h"
#include "operator/kube/kube_client.h"
#include "operator/policy/build_options.h"
#include "operator/runtime/store.h"

namespace disttrain::controller {

struct KueueGateDeps {
  kube::KubeClient* client = nullptr;
  // Kueue's Workloads owned by this front's jobs, its ResourceFlavors, the front's pods.
  const runtime::Store* workloads = nullptr;
  const runtime::Store* flavors = nullptr;
  const runtime::Store* pods = nullptr;
  // Write the Workload's PodsReady condition once every replica runs (ReconcilerDeps).
  bool pods_ready = true;
  policy::BuildOptions build;
  Expectations* expectations = nullptr;  // which finished Workloads this process released
  PassActions* actions = nullptr;
};

class KueueGate : public QueueGate {
 public:
  // How long a job whose Workload cannot be made or adopted yet (its WorkloadPriorityClass or
  // prebuilt Workload is missing) or whose admission names a ResourceFlavor not yet cached
  // waits before the next look.
  static constexpr absl::Duration kRetry = absl::Seconds(5);

  explicit KueueGate(KueueGateDeps deps) : deps_(std::move(deps)) {}

  // MultiKueue's manager copy of a valid DistributedTraining (a TFJob is dispatched through
  // Kueue's own TFJob adapter, whose kubeflow.org/tfjob integration makes its Workload).
  bool Serves(const api::DistributedTraining& job) const override;
  // A job without the queue label is not queued (Unqueued). Else finds its Workload (and
  // deletes any other it owns).
  std::unique_ptr<QueuePass> Enter(ReconcilePass& p) override;
  // Kueue's in-use finalizer keeps a deleted job's Workload (and its quota) until its pods are
  // gone: it goes then.
  std::optional<absl::Duration> JobGone(const std::string& key) override;

 private:
  const KueueGateDeps deps_;
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_KUEUE_GATE_H_
