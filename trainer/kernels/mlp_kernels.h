// The MLP's forward and backward pass (784-h-10, ReLU, softmax cross-entropy; the same math as
// trainer/models/mlp_model.cc) on the GPU. Built when the build has a CUDA compiler; otherwise
// FailedPrecondition. Thread-compatible (one call at a time per device is simplest).
#ifndef DISTTRAIN_TRAINER_KERNELS_MLP_KERNELS_H_
#define DISTTRAIN_TRAINER_KERNELS_MLP_KERNELS_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"

namespace disttrain::kernels {

struct MlpShape {
  int in = 0;
  int hidden = 0;  // > 0
  int out = 0;
};

// `params` and `grads`: hidden kernel [in x hidden], hidden bias, output kernel [hidden x out],
// output bias. `x` is n rows of `in` features, `y` their labels. Returns the mean loss and
// writes the mean gradients.
absl::StatusOr<float> CudaMlpLossAndGradient(const MlpShape& shape,
                                             std::span<const float* const> params, const float* x,
                                             const int32_t* y, int n,
                                             std::span<float* const> grads);

}  // namespace disttrain::kernels

#endif  // DISTTRAIN_TRAINER_KERNELS_MLP_KERNELS_H_
