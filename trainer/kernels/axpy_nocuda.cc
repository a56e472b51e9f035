// Linked when the build has no CUDA compiler: the CUDA entry points report that clearly.
#include "trainer/kernels/axpy.h"

namespace disttrain::kernels {

bool CudaAvailable() { return false; }

absl::Status CudaAxpy(float, std::span<const float>, std::span<float>) {
  return absl::FailedPreconditionError("disttrain-trainer was built without CUDA kernels");
}

}  // namespace disttrain::kernels
