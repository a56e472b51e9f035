#include "trainer/embedding/flat_index.h"

#include <utility>

#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer::embedding {

size_t FlatIndex::Home(uint64_t id) const { return SaltedHash(id, 1) & mask_; }

size_t FlatIndex::Probe(uint64_t id) const {
  size_t i = Home(id);
  while (values_[i] != kAbsent && ids_[i] != id) i = (i + 1) & mask_;
  return i;
}

uint32_t FlatIndex::Find(uint64_t id) const { return values_[Probe(id)]; }

void FlatIndex::Insert(uint64_t id, uint32_t value) {
  if ((size_ + 1) * 4 > values_.size() * 3) Grow();
  const size_t i = Probe(id);
  ids_[i] = id;
  values_[i] = value;
  ++size_;
}

void FlatIndex::Update(uint64_t id, uint32_t value) { values_[Probe(id)] = value; }

void FlatIndex::Erase(uint64_t id) {
  size_t hole = Probe(id);
  values_[hole] = kAbsent;
  --size_;
  // Backward shift: move later members of the probe run into the hole when their home is not
  // between the hole and their slot (cyclically), so every member stays reachable from its home.
  for (size_t j = (hole + 1) & mask_; values_[j] != kAbsent; j = (j + 1) & mask_) {
    const size_t home = Home(ids_[j]);
    const bool reachable_without_hole =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (reachable_without_hole) continue;
    ids_[hole] = ids_[j];
    values_[hole] = values_[j];
    values_[j] = kAbsent;
    hole = j;
  }
}

void FlatIndex::Reset(size_t slots) {
  ids_.assign(slots, 0);
  values_.assign(slots, kAbsent);
  ids_.shrink_to_fit();
  values_.shrink_to_fit();
  mask_ = slots - 1;
  size_ = 0;
}

void FlatIndex::Grow() {
  std::vector<uint64_t> ids = std::move(ids_);
  std::vector<uint32_t> values = std::move(values_);
  Reset(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] == kAbsent) continue;
    const size_t j = Probe(ids[i]);
    ids_[j] = ids[i];
    values_[j] = values[i];
    ++size_;
  }
}

}  // namespace disttrain::trainer::embedding
