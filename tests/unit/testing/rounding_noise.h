// Inputs for the kernels' bit-for-bit tests: values whose products need rounding, so a fused
// multiply-add would give other bits than the plain loop.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_ROUNDING_NOISE_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_ROUNDING_NOISE_H_

#include <cstddef>
#include <random>
#include <vector>

namespace disttrain::kernels::testing {

// `n` values uniform in [-3, 3), the same for the same `seed`.
inline std::vector<float> Noise(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

}  // namespace disttrain::kernels::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_ROUNDING_NOISE_H_
