// Helpers of the CUDA kernels: status from cudaError_t, device and pinned host buffers freed on
// scope exit, and kernel launches through cudaLaunchKernel (no <<<>>>, so clang-format keeps the
// sources intact). Only .cu files include this header.
#ifndef DISTTRAIN_TRAINER_KERNELS_CUDA_UTIL_H_
#define DISTTRAIN_TRAINER_KERNELS_CUDA_UTIL_H_

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "absl/status/status.h"

namespace disttrain::kernels {

inline absl::Status Check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(std::string(what) + ": " + cudaGetErrorString(err));
}

// A device copy of `n` elements of T; `ok()` false when allocation failed.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n)
      : n_(n),
        status_(Check(cudaMalloc(&ptr_, std::max<size_t>(1, n) * sizeof(T)), "cudaMalloc")) {}
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  const absl::Status& status() const { return status_; }
  T* get() const { return ptr_; }
  absl::Status Upload(const T* host) {
    if (!status_.ok()) return status_;
    return Check(cudaMemcpy(ptr_, host, n_ * sizeof(T), cudaMemcpyHostToDevice), "copy to device");
  }
  absl::Status Download(T* host) const {
    return Check(cudaMemcpy(host, ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "copy to host");
  }

 private:
  T* ptr_ = nullptr;  // set by status_'s initialiser, so declared before it
  size_t n_;
  absl::Status status_;
};

// `n` elements of T in page-locked host memory: copies from and to it run as DMA, asynchronously
// on a stream. `ok()` false when allocation failed.
template <typename T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t n)
      : status_(
            Check(cudaMallocHost(&ptr_, std::max<size_t>(1, n) * sizeof(T)), "cudaMallocHost")) {}
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  const absl::Status& status() const { return status_; }
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;  // set by status_'s initialiser, so declared before it
  absl::Status status_;
};

// Blocks of 256 threads covering n elements (grid-stride loops cover the rest).
inline unsigned BlocksFor(size_t n) {
  return static_cast<unsigned>(std::clamp<size_t>((n + 255) / 256, 1, 65535));
}

template <typename... Args>
absl::Status Launch(void (*kernel)(Args...), unsigned blocks, unsigned threads, Args... args) {
  void* argv[] = {static_cast<void*>(&args)...};
  absl::Status s = Check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                          dim3(threads), argv, 0, nullptr),
                         "kernel launch");
  if (!s.ok()) return s;
  return Check(cudaDeviceSynchronize(), "kernel run");
}

// Queues a kernel on `stream` without waiting for it; errors of the run surface at the next
// synchronisation.
template <typename... Args>
absl::Status LaunchAsync(void (*kernel)(Args...), unsigned blocks, unsigned threads,
                         cudaStream_t stream, Args... args) {
  void* argv[] = {static_cast<void*>(&args)...};
  return Check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(threads),
                                argv, 0, stream),
               "kernel launch");
}

inline absl::Status RequireDevice() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    return absl::FailedPreconditionError("no CUDA device is visible");
  return absl::OkStatus();
}

}  // namespace disttrain::kernels

#endif  // DISTTRAIN_TRAINER_KERNELS_CUDA_UTIL_H_
