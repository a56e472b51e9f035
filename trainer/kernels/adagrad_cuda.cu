#include "trainer/kernels/cuda_util.h"
#include "trainer/kernels/update_kernels.h"

namespace disttrain::kernels {
namespace {

__global__ void AdagradKernel(float lr, const float* g, float* acc, float* theta, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    acc[i] += g[i] * g[i];
    theta[i] = theta[i] - lr * g[i] / sqrtf(acc[i]);
  }
}

}  // namespace

absl::Status CudaAdagrad(float lr, std::span<const float> g, std::span<float> acc,
                         std::span<float> theta) {
  if (absl::Status s = RequireDevice(); !s.ok()) return s;
  if (g.size() != acc.size() || g.size() != theta.size())
    return absl::InvalidArgumentError("adagrad: buffers differ in size");
  DeviceBuffer<float> dg(g.size()), dacc(g.size()), dtheta(g.size());
  absl::Status s = dg.Upload(g.data());
  if (s.ok()) s = dacc.Upload(acc.data());
  if (s.ok()) s = dtheta.Upload(theta.data());
  if (s.ok())
    s = Launch(AdagradKernel, BlocksFor(g.size()), 256u, lr, static_cast<const float*>(dg.get()),
               dacc.get(), dtheta.get(), g.size());
  if (s.ok()) s = dacc.Download(acc.data());
  if (s.ok()) s = dtheta.Download(theta.data());
  return s;
}

}  // namespace disttrain::kernels
