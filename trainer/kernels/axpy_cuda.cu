#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "trainer/kernels/axpy.h"

namespace disttrain::kernels {
namespace {

__global__ void AxpyKernel(float alpha, const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    y[i] += alpha * x[i];
  }
}

absl::Status Check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace

bool CudaAvailable() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

absl::Status CudaAxpy(float alpha, std::span<const float> x, std::span<float> y) {
  if (!CudaAvailable()) return absl::FailedPreconditionError("no CUDA device is visible");
  if (x.size() != y.size()) return absl::InvalidArgumentError("axpy: x and y differ in size");
  const size_t bytes = y.size() * sizeof(float);
  float* dx = nullptr;
  float* dy = nullptr;
  absl::Status s = Check(cudaMalloc(&dx, bytes), "cudaMalloc x");
  if (s.ok()) s = Check(cudaMalloc(&dy, bytes), "cudaMalloc y");
  if (s.ok()) s = Check(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice), "copy x");
  if (s.ok()) s = Check(cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice), "copy y");
  if (s.ok()) {
    const int threads = 256;
    const int blocks =
        static_cast<int>(std::min<size_t>((y.size() + threads - 1) / threads, 65535));
    AxpyKernel < < <blocks> 0 ? blocks : 1, threads >>> (alpha, dx, dy, y.size());
    s = Check(cudaGetLastError(), "launch axpy");
  }
  if (s.ok()) s = Check(cudaMemcpy(y.data(), dy, bytes, cudaMemcpyDeviceToHost), "copy y back");
  cudaFree(dx);
  cudaFree(dy);
  return s;
}

}  // namespace disttrain::kernels
