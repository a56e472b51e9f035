// Picks the gradient engine (gradient_engine.h) that --model names.
#ifndef DISTTRAIN_TRAINER_ENGINE_ENGINE_FACTORY_H_
#define DISTTRAIN_TRAINER_ENGINE_ENGINE_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "trainer/cluster_spec.h"
#include "trainer/engine/gradient_engine.h"
#include "trainer/options.h"

namespace disttrain::trainer {

// The engine --model names, for a training replica (`evaluate` false: its share of the training
// split) or the evaluator (the test split). InvalidArgument/NotFound naming what is wrong with
// the flags, the schema or the data.
absl::StatusOr<std::unique_ptr<GradientEngine>> MakeGradientEngine(const TrainerOptions& options,
                                                                   const ClusterSpec& spec,
                                                                   bool evaluate);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_ENGINE_ENGINE_FACTORY_H_
