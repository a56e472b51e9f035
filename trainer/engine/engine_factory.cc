#include "trainer/engine/engine_factory.h"

#include "trainer/engine/dense_engine.h"
#include "trainer/engine/sparse_engine.h"
#include "trainer/setup.h"

namespace disttrain::trainer {

absl::StatusOr<std::unique_ptr<GradientEngine>> MakeGradientEngine(const TrainerOptions& o,
                                                                   const ClusterSpec& spec,
                                                                   bool evaluate) {
  if (IsSparseModel(o.model)) {
    absl::StatusOr<std::unique_ptr<SparseEngine>> e = SparseEngine::Make(o, spec, evaluate);
    if (!e.ok()) return e.status();
    return std::unique_ptr<GradientEngine>(*std::move(e));
  }
  absl::StatusOr<Setup> setup = BuildSetup(o, evaluate ? "test" : "train");
  if (!setup.ok()) return setup.status();
  return std::unique_ptr<GradientEngine>(std::make_unique<DenseEngine>(
      *std::move(setup), o, spec.replica_rank, spec.num_replicas(), evaluate));
}

}  // namespace disttrain::trainer
