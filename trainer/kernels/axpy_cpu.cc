#include <cassert>
#include <cstddef>
#include <cstring>

#include "trainer/kernels/axpy.h"
#include "trainer/kernels/cpu_clones.h"

namespace disttrain::kernels {

DISTTRAIN_CPU_CLONES void Axpy(float alpha, std::span<const float> x, std::span<float> y) {
  assert(x.size() == y.size());
  const float* __restrict xs = x.data();
  float* __restrict ys = y.data();
  const std::size_t n = y.size();
  for (std::size_t i = 0; i < n; ++i) ys[i] += alpha * xs[i];
}

DISTTRAIN_CPU_CLONES void AxpyTo(float alpha, std::span<const float> x, std::span<const float> y,
                                 std::span<float> out) {
  assert(x.size() == y.size() && y.size() == out.size());
  const float* xs = x.data();
  const float* ys = y.data();
  float* os = out.data();
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) os[i] = ys[i] + alpha * xs[i];
}

namespace {
// One float32 from 4 bytes at any alignment (compiles to a plain unaligned load).
inline float Load(const std::byte* p) {
  float v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

DISTTRAIN_CPU_CLONES void Axpy(float alpha, const std::byte* x, std::span<float> y) {
  float* __restrict ys = y.data();
  const std::size_t n = y.size();
  for (std::size_t i = 0; i < n; ++i) ys[i] += alpha * Load(x + i * sizeof(float));
}

DISTTRAIN_CPU_CLONES void AxpyTo(float alpha, const std::byte* x, std::span<const float> y,
                                 std::span<float> out) {
  assert(y.size() == out.size());
  const float* ys = y.data();
  float* os = out.data();
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) os[i] = ys[i] + alpha * Load(x + i * sizeof(float));
}

}  // namespace disttrain::kernels
