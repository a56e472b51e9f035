// The ids-to-slots index of embedding tables: lookups, growth, and deletion by backward shift
// under churn, checked against std::unordered_map.
#include "trainer/embedding/flat_index.h"

#include <random>
#include <unordered_map>

#include "gtest/gtest.h"

namespace disttrain::trainer::embedding {
namespace {

TEST(FlatIndexTest, FindsWhatWasInsertedAndNothingElse) {
  FlatIndex index;
  index.Insert(7, 1);
  index.Insert(0, 2);
  index.Insert(UINT64_MAX, 3);
  EXPECT_EQ(index.Find(7), 1u);
  EXPECT_EQ(index.Find(0), 2u);
  EXPECT_EQ(index.Find(UINT64_MAX), 3u);
  EXPECT_EQ(index.Find(8), FlatIndex::kAbsent);
  EXPECT_EQ(index.size(), 3u);
  index.Update(7, 9);
  EXPECT_EQ(index.Find(7), 9u);
}

TEST(FlatIndexTest, GrowsAndKeepsEveryKey) {
  FlatIndex index;
  const size_t small = index.MemoryBytes();
  for (uint64_t i = 0; i < 10000; ++i) index.Insert(i * 1000003, static_cast<uint32_t>(i));
  EXPECT_GT(index.MemoryBytes(), small);
  // At most 3/4 full after growth: 10,000 keys fit in 16,384 slots of 12 bytes.
  EXPECT_LE(index.MemoryBytes(), 16384u * 12);
  for (uint64_t i = 0; i < 10000; ++i) ASSERT_EQ(index.Find(i * 1000003), i) << i;
}

TEST(FlatIndexTest, ChurnMatchesAReferenceMap) {
  // Inserts and erases in random order on a small key range, so probe runs wrap and deletions
  // shift members of long runs: every key stays reachable, no erased key comes back.
  FlatIndex index;
  std::unordered_map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(1);
  for (int step = 0; step < 200000; ++step) {
    const uint64_t key = rng() % 3000;
    auto it = ref.find(key);
    if (it == ref.end()) {
      index.Insert(key, static_cast<uint32_t>(step));
      ref[key] = static_cast<uint32_t>(step);
    } else if (rng() % 2) {
      index.Erase(key);
      ref.erase(it);
    } else {
      index.Update(key, static_cast<uint32_t>(step));
      it->second = static_cast<uint32_t>(step);
    }
    if (step % 997 == 0) {
      ASSERT_EQ(index.size(), ref.size());
      for (uint64_t k = 0; k < 3000; ++k) {
        auto r = ref.find(k);
        ASSERT_EQ(index.Find(k), r == ref.end() ? FlatIndex::kAbsent : r->second)
            << "key " << k << " at step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace disttrain::trainer::embedding
