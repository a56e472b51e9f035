// The roles a trainer task plays. Each runs until its work is done or `stop` is set (SIGTERM),
// and returns the process exit code (see options.h).
#ifndef DISTTRAIN_TRAINER_ROLES_H_
#define DISTTRAIN_TRAINER_ROLES_H_

#include <atomic>

#include "common/clock.h"
#include "trainer/cluster_spec.h"
#include "trainer/options.h"

namespace disttrain::trainer {

// Serves its shards over gRPC until stopped; exits 0 on SIGTERM.
int RunParameterServer(const ClusterSpec& spec, const TrainerOptions& options,
                       const std::atomic<bool>& stop);
// Trains: pull, compute, push. The chief also initialises or restores the parameter servers,
// checkpoints, and ends the job at --steps.
// Time comes from `clock` (the retry budget, the step and round times, the step reporter's rates).
int RunReplica(const ClusterSpec& spec, const TrainerOptions& options,
               const std::atomic<bool>& stop, const Clock* clock = RealClock::Get());
// Evaluates each new checkpoint on the test split; ends after the final one (or on SIGTERM,
// after evaluating the newest).
int RunEvaluator(const ClusterSpec& spec, const TrainerOptions& options,
                 const std::atomic<bool>& stop);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_ROLES_H_
