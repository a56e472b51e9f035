#include <cmath>

#include "trainer/kernels/cpu_clones.h"
#include "trainer/kernels/update_kernels.h"

namespace disttrain::kernels {

DISTTRAIN_CPU_CLONES void AdagradTo(float lr, std::span<const float> g, std::span<float> acc,
                                    std::span<const float> in, std::span<float> out) {
  for (size_t i = 0; i < g.size(); ++i) {
    acc[i] += g[i] * g[i];
    out[i] = in[i] - lr * g[i] / std::sqrt(acc[i]);
  }
}

}  // namespace disttrain::kernels
