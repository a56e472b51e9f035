// A job's progress from what its trainer reported (trainer_reading.h): the rates between two
// readings and the time the training should end. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_PROGRESS_ESTIMATE_H_
#define DISTTRAIN_OPERATOR_PROGRESS_ESTIMATE_H_

#include <cstdint>
#include <optional>

#include "operator/api/types.h"
#include "operator/progress/trainer_reading.h"

namespace disttrain::progress {

// From the latest reading and the one before it (none: the first). The rates need the step to
// have moved forward between two readings at least a second apart (a step that went back, a
// restore from a checkpoint, gives none); the completion time needs a rate and a target. Times
// are whole seconds, as the API stores them, so that a status read back equals the one written.
api::JobProgress EstimateProgress(const TrainerReading& latest,
                                  const std::optional<TrainerReading>& before);

// The progress of a job that ended: no rate and no completion time any more; the final step
// when the chief reported one (status.result.globalStep).
api::JobProgress FinishProgress(api::JobProgress progress, std::optional<int64_t> final_step);

}  // namespace disttrain::progress

#endif  // DISTTRAIN_OPERATOR_PROGRESS_ESTIMATE_H_
