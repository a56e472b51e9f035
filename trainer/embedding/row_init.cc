#include "trainer/embedding/row_init.h"

#include <cmath>

#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer::embedding {

void InitialRow(uint64_t seed, uint64_t id, int dim, float stddev, float* out) {
  if (stddev == 0) {
    for (int i = 0; i < dim; ++i) out[i] = 0;
    return;
  }
  const float a = stddev * std::sqrt(3.0f);
  const uint64_t base = Mix64(Mix64(seed) ^ id);
  for (int i = 0; i < dim; ++i) {
    const uint64_t bits = Mix64(base + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull);
    const double u = static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    out[i] = static_cast<float>((2 * u - 1) * a);
  }
}

}  // namespace disttrain::trainer::embedding
