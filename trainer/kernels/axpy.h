// Dense float32 update kernels: y += alpha * x, the core of every parameter update.
//
// The CPU kernel is always built. The CUDA kernel is compiled when the build finds a CUDA
// compiler (see cmake/Cuda.cmake); otherwise CudaAxpy reports that it is unavailable.
// All functions are thread-safe for disjoint outputs.
#ifndef DISTTRAIN_TRAINER_KERNELS_AXPY_H_
#define DISTTRAIN_TRAINER_KERNELS_AXPY_H_

#include <cstddef>
#include <span>

#include "absl/status/status.h"

namespace disttrain::kernels {

// y[i] += alpha * x[i] on the CPU. x and y must have the same size.
void Axpy(float alpha, std::span<const float> x, std::span<float> y);

// out[i] = y[i] + alpha * x[i] on the CPU: an update written to a fresh buffer (copy-on-write)
// in the same pass. All three have the same size; out may be y.
void AxpyTo(float alpha, std::span<const float> x, std::span<const float> y, std::span<float> out);

// The same two with x given as the raw bytes of y.size() float32 values at any alignment, as they
// lie in a network buffer (a received push is applied from where it arrived, without a copy).
void Axpy(float alpha, const std::byte* x, std::span<float> y);
void AxpyTo(float alpha, const std::byte* x, std::span<const float> y, std::span<float> out);

// True when this binary has CUDA kernels and a CUDA device is visible.
bool CudaAvailable();
// Visible CUDA devices (0 without CUDA kernels).
int CudaDeviceCount();
// Makes `device` the calling thread's CUDA device.
absl::Status CudaUseDevice(int device);

// y[i] += alpha * x[i] on the GPU, for host buffers (copied in and out).
// Returns FailedPrecondition when CUDA is unavailable.
absl::Status CudaAxpy(float alpha, std::span<const float> x, std::span<float> y);

}  // namespace disttrain::kernels

#endif  // DISTTRAIN_TRAINER_KERNELS_AXPY_H_
