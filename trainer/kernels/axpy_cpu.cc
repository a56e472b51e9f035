#include <cassert>
#include <cstddef>

#include "trainer/kernels/axpy.h"

namespace disttrain::kernels {

void Axpy(float alpha, std::span<const float> x, std::span<float> y) {
  assert(x.size() == y.size());
  const float* __restrict xs = x.data();
  float* __restrict ys = y.data();
  const std::size_t n = y.size();
  for (std::size_t i = 0; i < n; ++i) ys[i] += alpha * xs[i];
}

void AxpyTo(float alpha, std::span<const float> x, std::span<const float> y, std::span<float> out) {
  assert(x.size() == y.size() && y.size() == out.size());
  const float* xs = x.data();
  const float* ys = y.data();
  float* os = out.data();
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) os[i] = ys[i] + alpha * xs[i];
}

}  // namespace disttrain::kernels
