// When a job is Running: every replica it still wants runs and is ready. Pure; thread-safe.
//
// Wanted: every replica of the spec except those that succeeded (now or before their pod was
// removed) and failed evaluators (an evaluator that gave up never holds the job back). Once
// Running, a job stays Running until a restart, a suspension or the end: pods that stop being
// ready as they exit (workers done before the chief) do not send it back to Created. With an
// elasticPolicy, minReplicas of the wanted workers are enough (the trainer trains with the
// workers that are there and takes the others when they come).
#ifndef DISTTRAIN_OPERATOR_POLICY_RUNNING_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_RUNNING_POLICY_H_

#include <functional>
#include <map>
#include <utility>

#include "operator/api/types.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

struct Readiness {
  int wanted = 0;
  int running = 0;  // of the wanted: a pod Running, Ready and not terminating
  int workers_wanted = 0;
  int workers_running = 0;
  // The workers that are enough (elasticPolicy.minReplicas, at most those wanted); without an
  // elasticPolicy, every wanted one.
  int workers_enough = 0;
  bool AllRunning() const { return running == wanted; }
  // Every wanted pod but the workers runs, and at least workers_enough of them.
  bool EnoughRunning() const {
    return running - workers_running == wanted - workers_wanted &&
           workers_running >= workers_enough;
  }
};

using PodsByReplica = std::map<std::pair<api::ReplicaType, int>, PodState>;

Readiness CountReadiness(const api::DistributedTraining& job, const PodsByReplica& pods,
                         const std::function<bool(api::ReplicaType, int)>& succeeded);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_RUNNING_POLICY_H_
