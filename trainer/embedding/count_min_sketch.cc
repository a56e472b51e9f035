#include "trainer/embedding/count_min_sketch.h"

#include <algorithm>

#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer::embedding {

CountMinSketch::CountMinSketch(size_t width) {
  size_t w = 1;
  while (w < width) w <<= 1;
  mask_ = w - 1;
  counters_.assign(w * kDepth, 0);
}

size_t CountMinSketch::Index(int row, uint64_t id) const {
  return static_cast<size_t>(row) * (mask_ + 1) + (SaltedHash(id, 100 + row) & mask_);
}

uint32_t CountMinSketch::Estimate(uint64_t id) const {
  uint32_t m = UINT16_MAX;
  for (int r = 0; r < kDepth; ++r) m = std::min<uint32_t>(m, counters_[Index(r, id)]);
  return m;
}

uint32_t CountMinSketch::Add(uint64_t id) {
  // Conservative update: only the counters at the minimum grow, which keeps the others from
  // drifting up with every collision.
  const uint32_t next = std::min<uint32_t>(Estimate(id) + 1, UINT16_MAX);
  for (int r = 0; r < kDepth; ++r) {
    uint16_t& c = counters_[Index(r, id)];
    if (c < next) c = static_cast<uint16_t>(next);
  }
  return next;
}

void CountMinSketch::Clear() { std::fill(counters_.begin(), counters_.end(), 0); }

}  // namespace disttrain::trainer::embedding
