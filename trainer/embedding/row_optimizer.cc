#include "trainer/embedding/row_optimizer.h"

#include <cmath>

namespace disttrain::trainer::embedding {

void InitRowState(const TableConfig& c, float* state) {
  const int d = c.dim;
  switch (c.optimizer) {
    case RowOptimizerKind::kSgd:
      return;
    case RowOptimizerKind::kAdagrad:
      for (int i = 0; i < d; ++i) state[i] = c.initial_accumulator;
      return;
    case RowOptimizerKind::kFtrl:
      for (int i = 0; i < d; ++i) state[i] = 0;                          // z
      for (int i = 0; i < d; ++i) state[d + i] = c.initial_accumulator;  // n
      return;
  }
}

void ApplyRowGradient(const TableConfig& c, const float* g, float* w, float* state) {
  const int d = c.dim;
  const float lr = c.learning_rate;
  switch (c.optimizer) {
    case RowOptimizerKind::kSgd:
      for (int i = 0; i < d; ++i) w[i] -= lr * g[i];
      return;
    case RowOptimizerKind::kAdagrad:
      for (int i = 0; i < d; ++i) {
        state[i] += g[i] * g[i];
        w[i] -= lr * g[i] / std::sqrt(state[i]);
      }
      return;
    case RowOptimizerKind::kFtrl: {
      float* z = state;
      float* n = state + d;
      for (int i = 0; i < d; ++i) {
        const float n_new = n[i] + g[i] * g[i];
        const float sigma = (std::sqrt(n_new) - std::sqrt(n[i])) / lr;
        z[i] += g[i] - sigma * w[i];
        n[i] = n_new;
        if (std::fabs(z[i]) <= c.l1) {
          w[i] = 0;
        } else {
          const float sign = z[i] < 0 ? -1.0f : 1.0f;
          w[i] = -(z[i] - sign * c.l1) / ((c.beta + std::sqrt(n_new)) / lr + c.l2);
        }
      }
      return;
    }
  }
}

}  // namespace disttrain::trainer::embedding
