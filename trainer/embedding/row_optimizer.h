// The per-row optimisers of embedding tables: each row keeps its state beside its values, so an
// update touches one row's memory only, and rows update independently of each other.
//   sgd:      w -= lr * g
//   adagrad:  n += g^2; w -= lr * g / sqrt(n)                      (state: n)
//   ftrl:     FTRL-Proximal, per coordinate (McMahan et al., KDD'13, Algorithm 1):
//             sigma = (sqrt(n + g^2) - sqrt(n)) / lr; z += g - sigma * w; n += g^2;
//             w = 0 if |z| <= l1, else -(z - sign(z) * l1) / ((beta + sqrt(n)) / lr + l2)
//                                                                 (state: z, then n)
// Stateless functions; thread-compatible per row.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_ROW_OPTIMIZER_H_
#define DISTTRAIN_TRAINER_EMBEDDING_ROW_OPTIMIZER_H_

#include "trainer/embedding/table_config.h"

namespace disttrain::trainer::embedding {

// The state of a new row (StatePerValue(optimizer) * dim floats).
void InitRowState(const TableConfig& config, float* state);

// Applies the gradient `g` (dim floats) to one row's `values` and `state`.
void ApplyRowGradient(const TableConfig& config, const float* g, float* values, float* state);

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_ROW_OPTIMIZER_H_
