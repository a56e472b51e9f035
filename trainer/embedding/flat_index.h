// An open-addressing hash map from 64-bit ids to 32-bit row slots: linear probing, at most 3/4
// full, deletion by backward shift (no tombstones, so lookups stay short under churn). 12 bytes
// a slot, about 20 a key at the average fill: what keeps a table's memory near its rows' own
// bytes (std::unordered_map costs about 50 a key). Thread-compatible.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_FLAT_INDEX_H_
#define DISTTRAIN_TRAINER_EMBEDDING_FLAT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace disttrain::trainer::embedding {

class FlatIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  FlatIndex() { Reset(16); }

  // The value of `id`, or kAbsent.
  uint32_t Find(uint64_t id) const;
  // Adds `id` (which must be absent) with `value` (not kAbsent).
  void Insert(uint64_t id, uint32_t value);
  // Changes the value of `id`, which must be present.
  void Update(uint64_t id, uint32_t value);
  // Removes `id`, which must be present.
  void Erase(uint64_t id);
  void Clear() { Reset(16); }

  size_t size() const { return size_; }
  size_t MemoryBytes() const { return ids_.capacity() * 8 + values_.capacity() * 4; }

 private:
  size_t Home(uint64_t id) const;
  // The slot holding `id`, or the empty slot where it would go.
  size_t Probe(uint64_t id) const;
  void Reset(size_t slots);
  void Grow();

  std::vector<uint64_t> ids_;
  std::vector<uint32_t> values_;  // kAbsent: an empty slot
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_FLAT_INDEX_H_
