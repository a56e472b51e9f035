// What the unit tests of the training schemes share (trainer/ps/ update rules, trainer/worker/
// schemes/): a one-shard store read back as a vector, a quadratic toy objective whose gradients
// are known by hand, and a scheme config with small hyper-parameters.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_SCHEME_FIXTURE_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_SCHEME_FIXTURE_H_

#include <vector>

#include "trainer/ps/push.h"
#include "trainer/ps/shard_store.h"
#include "trainer/schemes/scheme.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer::testing {

// The values of the store's first block (a store of one small shard has no other).
inline std::vector<float> Values(const ShardStore& store) {
  ShardStore::BlockRef b = store.Read(0);
  return std::vector<float>(b->values.get(), b->values.get() + b->size);
}

// The gradient {v, v} of the two-element shard "w/0".
inline GradientMap Grad(float v) { return {{"w/0", {v, v}}}; }

// A quadratic toy objective per batch k: loss = |theta - t_k|^2 / 2, gradient theta - t_k, the
// targets cycling through `targets`. Counts the batches drawn.
struct Toy {
  std::vector<std::vector<float>> targets = {{1, -2}, {3, 0.5f}, {-1, 4}};
  int batches = 0;
  WorkerScheme::GradientFn Fn() {
    return [this](const Params& at, Params* g) {
      const std::vector<float>& t = targets[batches++ % targets.size()];
      g->assign(1, std::vector<float>(at[0].size()));
      float loss = 0;
      for (size_t i = 0; i < at[0].size(); ++i) {
        (*g)[0][i] = at[0][i] - t[i];
        loss += 0.5f * (*g)[0][i] * (*g)[0][i];
      }
      return loss;
    };
  }
};

// Learning rate 0.25, two replicas to aggregate.
inline SchemeConfig Config(Scheme scheme, int local_steps = 1) {
  SchemeConfig c;
  c.scheme = scheme;
  c.learning_rate = 0.25f;
  c.local_steps = local_steps;
  c.replicas_to_aggregate = 2;
  return c;
}

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_SCHEME_FIXTURE_H_
