// The Kueue gate's pass of one job (kueue_gate.h), shared by its two files: kueue_gate.cc
// (the Workload of a job that runs here: find, create, replace, admit, hold, the job side of its
// status) and kueue_gate_multikueue.cc (MultiKueue's two ends: the manager cluster's Forward,
// the worker cluster's adoption of a prebuilt Workload). Internal to operator/controller/; a
// pass lives on one worker thread.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_INTERNAL_KUEUE_PASS_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_INTERNAL_KUEUE_PASS_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/queue_gate.h"
#include "operator/queueing/admission.h"

namespace disttrain::controller {

struct KueueGateDeps;  // kueue_gate.h (included by the .cc files: it includes no internal header)

// One pass of a job sent to a LocalQueue: its Workload as cached (null: none yet), what every
// role's pods carry once admitted, whether its quota goes back (once no pod is left).
class KueuePass : public QueuePass {
 public:
  KueuePass(const KueueGateDeps& deps, ReconcilePass& p);

  bool Suspend(ReconcilePass& p) override { return SetActive(p, false); }
  bool Admit(ReconcilePass& p) override;
  absl::Status ShapePod(api::ReplicaType type, nlohmann::json* pod) const override;
  void AfterWrite(ReconcilePass& p) override;
  void Forward(ReconcilePass& p) override;

 private:
  // Spec.active of its Workload: false deactivates it (Kueue evicts it, and its quota goes back
  // once the pods are gone); true activates it again (only on a resume: a Workload an admin
  // deactivated stays so, and its job Queued). False when the write failed.
  bool SetActive(ReconcilePass& p, bool active);
  bool Admitted(ReconcilePass& p);
  // The Workload Kueue would admit for the job as it is now (every pod built to count it);
  // false when the job cannot be built (it is then failed as invalid).
  bool BuildWanted(ReconcilePass& p, std::optional<nlohmann::json>* wanted);
  // Whether the job's Workload still stands for the job as it is now: built from this
  // generation, queue and priority class, or with the same PodSets (all of it while no quota is
  // reserved). A Workload that does not is replaced, as Kueue's job controllers do. nullopt: the
  // Workload the job wants cannot be built (the job is failed for it).
  std::optional<bool> StandsForJob(ReconcilePass& p, const queueing::WorkloadState& st);
  // Not admitted (yet, or again after an eviction): no pod runs; the Queued condition says why.
  // `quiet`: no event (another one of the pass says it).
  void Hold(ReconcilePass& p, const queueing::Waiting& why, bool quiet = false);
  bool Create(ReconcilePass& p, const nlohmann::json& wanted);
  // MultiKueue's copy of a job: adopts the Workload it prebuilt (kueue.x-k8s.io/prebuilt-
  // workload-name) once it exists and matches the job (`build_wanted` fills `wanted`); fails the
  // job when it does not match. False: the job waits.
  bool Adopt(ReconcilePass& p, const std::string& name, const std::function<bool()>& build_wanted,
             const std::optional<nlohmann::json>& wanted);
  void Delete(ReconcilePass& p, const nlohmann::json& workload, const std::string& why);
  // In MultiKueue's manager cluster, until a worker's copy holds the quota (MultiKueue mirrors
  // no status before): the job's Queued condition says why it waits.
  void SayWhyDispatchWaits(ReconcilePass& p, bool just_created);

  const KueueGateDeps& deps_;
  // spec.managedBy kueue.x-k8s.io/multikueue: the manager cluster's copy; this operator makes
  // its Workload only (Forward).
  const bool multikueue_manager_;
  const bool prebuilt_;  // MultiKueue's copy: its Workload is prebuilt, to adopt, never made
  const std::string workload_name_;  // the one the job's Workload has (JobWorkloadName)
  std::vector<std::shared_ptr<const nlohmann::json>> workloads_;  // every one the job owns
  std::shared_ptr<const nlohmann::json> workload_;
  std::optional<std::map<std::string, queueing::PodSetInfo>> admission_;
  bool release_quota_ = false;
  bool replacing_ = false;  // the job's Workload of its own name is being deleted
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_INTERNAL_KUEUE_PASS_H_
