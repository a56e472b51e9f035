#include "trainer/worker/schemes/worker_scheme.h"

#include "trainer/kernels/axpy.h"

namespace disttrain::trainer {

void AddScaled(Params* y, float a, const Params& x) {
  for (size_t v = 0; v < x.size(); ++v) kernels::Axpy(a, x[v], (*y)[v]);
}

float SumLocalGradients(int lambda, const WorkerScheme::GradientFn& gradient, Params* local,
                        Params* g, Params* sum,
                        absl::FunctionRef<void(const Params& g, bool last)> step) {
  double loss = 0;
  for (int k = 0; k < lambda; ++k) {
    loss += gradient(*local, g);
    if (k == 0) {
      *sum = *g;
    } else {
      AddScaled(sum, 1.0f, *g);
    }
    step(*g, k + 1 == lambda);
  }
  return static_cast<float>(loss / lambda);
}

std::unique_ptr<WorkerScheme> MakeWorkerScheme(const SchemeConfig& c, int replica_rank) {
  switch (c.scheme) {
    case Scheme::kDownpour:
      return MakeDownpourScheme(c, /*adagrad=*/true);
    case Scheme::kDownpourSgd:
      return MakeDownpourScheme(c, /*adagrad=*/false);
    case Scheme::kAgn:
    case Scheme::kSagn:
      return MakeAgnScheme(c);
    case Scheme::kAeasgd:
    case Scheme::kAeamsgd:
      return MakeEasgdScheme(c);
    case Scheme::kSync:
      if (!c.worker_learning_rates.empty() && replica_rank >= 0 &&
          replica_rank < static_cast<int>(c.worker_learning_rates.size())) {
        // The servers multiply by η: weighting the gradient by η_i / η applies η_i to it.
        return MakeGradientScheme(c.worker_learning_rates[replica_rank] / c.learning_rate);
      }
      break;
    case Scheme::kHogwild:
    case Scheme::kDynSgd:
      break;
  }
  return MakeGradientScheme(1.0f);
}

}  // namespace disttrain::trainer
