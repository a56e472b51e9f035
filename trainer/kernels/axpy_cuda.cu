#include "trainer/kernels/axpy.h"
#include "trainer/kernels/cuda_util.h"

namespace disttrain::kernels {
namespace {

__global__ void AxpyKernel(float alpha, const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    y[i] += alpha * x[i];
  }
}

}  // namespace

bool CudaAvailable() { return RequireDevice().ok(); }

int CudaDeviceCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

absl::Status CudaUseDevice(int device) { return Check(cudaSetDevice(device), "cudaSetDevice"); }

absl::Status CudaAxpy(float alpha, std::span<const float> x, std::span<float> y) {
  if (absl::Status s = RequireDevice(); !s.ok()) return s;
  if (x.size() != y.size()) return absl::InvalidArgumentError("axpy: x and y differ in size");
  DeviceBuffer<float> dx(x.size()), dy(y.size());
  absl::Status s = dx.Upload(x.data());
  if (s.ok()) s = dy.Upload(y.data());
  if (s.ok())
    s = Launch(AxpyKernel, BlocksFor(y.size()), 256u, alpha, static_cast<const float*>(dx.get()),
               dy.get(), y.size());
  if (s.ok()) s = dy.Download(y.data());
  return s;
}

}  // namespace disttrain::kernels
