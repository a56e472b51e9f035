// Approximate counts of ids in fixed memory (Cormode and Muthukrishnan's count-min sketch with
// conservative update): a count is never below the true one and exceeds it only through hash
// collisions, so frequency admission (TableConfig::min_count) may admit an id a little early,
// never late, and the memory spent on ids that never reach the threshold stays bounded.
// Thread-compatible.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_COUNT_MIN_SKETCH_H_
#define DISTTRAIN_TRAINER_EMBEDDING_COUNT_MIN_SKETCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace disttrain::trainer::embedding {

class CountMinSketch {
 public:
  static constexpr int kDepth = 4;
  // `width`: counters per row, rounded up to a power of two.
  explicit CountMinSketch(size_t width);

  // Counts one more sighting of `id` and returns its estimated count (saturates at 65535).
  uint32_t Add(uint64_t id);
  uint32_t Estimate(uint64_t id) const;
  void Clear();
  size_t MemoryBytes() const { return counters_.capacity() * sizeof(uint16_t); }

 private:
  size_t Index(int row, uint64_t id) const;
  size_t mask_;
  std::vector<uint16_t> counters_;  // kDepth rows of mask_ + 1
};

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_COUNT_MIN_SKETCH_H_
