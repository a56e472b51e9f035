// Linked when the build has no CUDA compiler: the CUDA entry points report that clearly.
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/kernels/update_kernels.h"

namespace disttrain::kernels {
namespace {

absl::Status NoCuda() {
  return absl::FailedPreconditionError("disttrain-trainer was built without CUDA kernels");
}

}  // namespace

bool CudaAvailable() { return false; }

int CudaDeviceCount() { return 0; }

absl::Status CudaUseDevice(int) { return NoCuda(); }

absl::Status CudaAxpy(float, std::span<const float>, std::span<float>) { return NoCuda(); }

absl::Status CudaAdagrad(float, std::span<const float>, std::span<float>, std::span<float>) {
  return NoCuda();
}

absl::StatusOr<std::unique_ptr<CudaMlp>> CudaMlp::Create(int, const MlpShape&, int) {
  return NoCuda();
}

}  // namespace disttrain::kernels
