// What Kueue decided about a job's Workload, read from its status: waiting (and why), admitted
// (and what every role's pods must carry), evicted, finished. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_QUEUEING_ADMISSION_H_
#define DISTTRAIN_OPERATOR_QUEUEING_ADMISSION_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/queueing/queue_reason.h"
#include "operator/queueing/topology.h"

namespace disttrain::queueing {

// Kueue's Workload condition types.
inline constexpr char kQuotaReserved[] = "QuotaReserved";
inline constexpr char kAdmitted[] = "Admitted";
inline constexpr char kEvicted[] = "Evicted";
inline constexpr char kPodsReady[] = "PodsReady";
inline constexpr char kFinished[] = "Finished";
inline constexpr char kRequeued[] = "Requeued";

struct WorkloadState {
  bool quota_reserved = false;
  bool admitted = false;  // Admitted=True (quota reserved and every admission check ready)
  bool evicted = false;
  bool finished = false;
  bool deleting = false;  // deletionTimestamp set
  bool pods_ready = false;
  bool has_finalizer = false;
  std::string cluster_queue;
  // Why it waits: QuotaReserved=False's reason and message ("Inadmissible: LocalQueue q doesn't
  // exist", "Pending: couldn't assign flavors ..."), else Admitted=False's.
  std::string waiting_reason, waiting_message;
  std::string evicted_reason, evicted_message;  // "Preempted", "PodsReadyTimeout", ...
  std::map<std::string, int> reclaimable;       // status.reclaimablePods
};

WorkloadState ReadWorkload(const nlohmann::json& workload);

// Why a job whose Workload is not (or no longer) admitted waits, for its Queued condition:
// evicted (reason Preempted or Evicted), quota reserved but admission checks pending, Kueue's
// own reason (Inadmissible, or any other as Kueue says it, e.g. Pending), else waiting for
// admission from `queue`.
Waiting WhyWaiting(const WorkloadState& state, const std::string& workload_name,
                   const std::string& queue);

// What a queued job's pass does about its Workload before any pod, as Kueue's own job
// controllers decide it.
enum class AdmissionStep {
  kWaitForReplacement,  // its Workload is being deleted: hold (WorkloadReplaced) until gone
  kAdopt,               // MultiKueue's copy without its Workload: adopt the prebuilt one
  kCreate,              // no Workload: create it, and hold until Kueue answers
  kFailFinished,        // Kueue finished the Workload before the job ended: fail the job
  kStop,                // the Workload the job wants cannot be built (the job failed for it)
  kFailOutOfSync,       // MultiKueue's copy changed since it adopted its Workload: fail it
  kReplace,             // the job changed what Kueue admitted: replace the Workload, hold
  kRun,                 // admitted and not evicted: run with the admission
  kWait,                // hold, saying why (WhyWaiting)
};

struct AdmissionFacts {
  bool has_workload = false;  // the job's own Workload, not being deleted
  bool replacing = false;     // the job's own Workload is being deleted
  bool prebuilt = false;      // MultiKueue's copy: its Workload is prebuilt, never made here
  WorkloadState workload;     // when has_workload
  // When has_workload and it is not finished: whether the Workload still stands for the job as
  // it is now (queueing::BuiltFrom, SamePodSets, Matches); nullopt when the job's own cannot be
  // built.
  std::optional<bool> stands;
};

AdmissionStep DecideAdmission(const AdmissionFacts& facts);

// What every pod of one PodSet carries once admitted (Kueue's PodSetInfo): the node labels and
// tolerations of the ResourceFlavors it was assigned, Kueue's labels (podset, local and cluster
// queue), and the admission checks' podSetUpdates.
struct PodSetInfo {
  // The pods admitted (podSetAssignments[].count): fewer than the PodSet's count when Kueue
  // admitted it partially (down to its minCount); 0 when the assignment does not say.
  int32_t count = 0;
  std::map<std::string, std::string> node_selector, labels, annotations;
  nlohmann::json tolerations = nlohmann::json::array();
  std::vector<std::string> scheduling_gates;
  // Kueue placed the PodSet by topology (its assignment has a topologyAssignment): its pods are
  // created gated (kTopologyGate) with the Workload's name (kWorkloadAnnotation), and without a
  // topology annotation of their own get the unconstrained one.
  bool topology = false;
};

// A ResourceFlavor by name, or nullptr when it does not exist.
using FlavorLookup = std::function<const nlohmann::json*(const std::string&)>;

// The PodSetInfo of every PodSet of an admitted Workload, by PodSet name. FailedPrecondition
// when a flavor it names does not exist; InvalidArgument when two sources disagree on a label,
// annotation or node selector key.
absl::StatusOr<std::map<std::string, PodSetInfo>> PodSetInfos(const nlohmann::json& workload,
                                                              const FlavorLookup& flavor);

// The workers an elastic job runs with when Kueue admitted its Worker PodSet partially (fewer
// than `wanted`, down to its minCount); nullopt when admitted whole (or the assignment does not
// say).
std::optional<int32_t> PartialWorkers(const std::map<std::string, PodSetInfo>& admission,
                                      int32_t wanted);

// Merges `info` into a pod the operator is about to create. InvalidArgument when the pod's own
// node selector gives a key another value (it could never land on the admitted flavor).
absl::Status ApplyPodSetInfo(const PodSetInfo& info, nlohmann::json* pod);

}  // namespace disttrain::queueing

#endif  // DISTTRAIN_OPERATOR_QUEUEING_ADMISSION_H_
