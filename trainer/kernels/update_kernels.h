// Element-wise parameter-update kernels beyond axpy (axpy.h): Adagrad, the servers' rule of
// DOWNPOUR. The CPU kernel is always built; the CUDA one when the build has a CUDA compiler
// (otherwise it reports FailedPrecondition). Thread-safe for disjoint outputs.
#ifndef DISTTRAIN_TRAINER_KERNELS_UPDATE_KERNELS_H_
#define DISTTRAIN_TRAINER_KERNELS_UPDATE_KERNELS_H_

#include <span>

#include "absl/status/status.h"

namespace disttrain::kernels {

// acc[i] += g[i]^2; out[i] = in[i] - lr * g[i] / sqrt(acc[i]). out may be in.
void AdagradTo(float lr, std::span<const float> g, std::span<float> acc, std::span<const float> in,
               std::span<float> out);

// The same on the GPU for host buffers (theta updated in place).
absl::Status CudaAdagrad(float lr, std::span<const float> g, std::span<float> acc,
                         std::span<float> theta);

}  // namespace disttrain::kernels

#endif  // DISTTRAIN_TRAINER_KERNELS_UPDATE_KERNELS_H_
