// One parameter server's part of an embedding table: rows created on first sight or after
// min_count sightings, bounded by a capacity with LRU or LFU eviction, versioned for incremental
// checkpoints, and updated concurrently without lost or torn updates.
#include "trainer/embedding/embedding_table.h"

#include <atomic>
#include <cmath>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/embedding/row_init.h"

namespace disttrain::trainer::embedding {
namespace {

TableConfig Sgd(int dim = 4) {
  TableConfig c;
  c.name = "t";
  c.dim = dim;
  c.optimizer = RowOptimizerKind::kSgd;
  c.learning_rate = 1.0f;
  c.init_stddev = 0.1f;
  c.seed = 9;
  return c;
}

std::vector<float> Initial(const TableConfig& c, uint64_t id) {
  std::vector<float> row(c.dim);
  InitialRow(c.seed, id, c.dim, c.init_stddev, row.data());
  return row;
}

std::vector<float> PullOne(EmbeddingTable& t, uint64_t id, bool train = false) {
  std::vector<float> out(t.dim());
  t.Pull({&id, 1}, train, out.data());
  return out;
}

TEST(EmbeddingTableTest, ATrainingLookupCreatesTheRowFromItsSeedAndId) {
  EmbeddingTable t(Sgd());
  EXPECT_EQ(PullOne(t, 5), Initial(t.config(), 5)) << "a missing row reads as its initial value";
  EXPECT_EQ(t.stats().rows, 0u) << "an evaluation lookup creates nothing";
  EXPECT_EQ(PullOne(t, 5, /*train=*/true), Initial(t.config(), 5));
  EXPECT_EQ(t.stats().rows, 1u);
  EXPECT_EQ(t.stats().created, 1u);
}

TEST(EmbeddingTableTest, PushesApplyTheOptimizerToEachRow) {
  EmbeddingTable t(Sgd(2));
  const uint64_t ids[] = {1, 2};
  std::vector<float> rows(4);
  t.Pull(ids, true, rows.data());
  const float grads[] = {0.5f, 0.0f, -1.0f, 2.0f};
  t.Push(ids, grads);
  std::vector<float> after(4);
  t.Pull(ids, false, after.data());
  EXPECT_FLOAT_EQ(after[0], rows[0] - 0.5f);
  EXPECT_FLOAT_EQ(after[1], rows[1]);
  EXPECT_FLOAT_EQ(after[2], rows[2] + 1.0f);
  EXPECT_FLOAT_EQ(after[3], rows[3] - 2.0f);
  EXPECT_EQ(t.stats().updated, 2u);
}

TEST(EmbeddingTableTest, MinCountAdmitsAnIdOnlyOnceSeenOftenEnough) {
  TableConfig c = Sgd();
  c.min_count = 3;
  EmbeddingTable t(c);
  const std::vector<float> g(4, 1.0f);
  const uint64_t id = 77;
  PullOne(t, id, true);
  t.Push({&id, 1}, g.data());
  EXPECT_EQ(t.stats().rows, 0u) << "seen once of three";
  EXPECT_EQ(t.stats().not_admitted, 1u) << "its gradient is dropped and counted";
  EXPECT_EQ(PullOne(t, id), Initial(c, id)) << "it still reads as its initial value";
  PullOne(t, id, true);
  EXPECT_EQ(t.stats().rows, 0u);
  PullOne(t, id, true);
  EXPECT_EQ(t.stats().rows, 1u) << "the third sighting admits it";
  t.Push({&id, 1}, g.data());
  EXPECT_FLOAT_EQ(PullOne(t, id)[0], Initial(c, id)[0] - 1.0f);
}

TEST(EmbeddingTableTest, LruEvictsTheRowsNotUsedLately) {
  TableConfig c = Sgd();
  c.capacity = 200;
  EmbeddingTable t(c);
  std::vector<float> out(4);
  // 200 old rows, then 100 hot ones used every round while 300 cold ones pass through once.
  for (uint64_t id = 0; id < 200; ++id) t.Pull({&id, 1}, true, out.data());
  EXPECT_EQ(t.stats().rows, 200u);
  for (uint64_t round = 0; round < 30; ++round) {
    for (uint64_t hot = 1000; hot < 1100; ++hot) t.Pull({&hot, 1}, true, out.data());
    for (uint64_t cold = 10000 + round * 10; cold < 10000 + round * 10 + 10; ++cold)
      t.Pull({&cold, 1}, true, out.data());
  }
  EmbeddingTable::Stats s = t.stats();
  EXPECT_LE(s.rows, 200u) << "never above the capacity";
  EXPECT_EQ(s.evicted, s.created - s.rows);
  int hot_kept = 0, old_kept = 0;
  t.ForEachRow(0, [&](uint64_t id, const float*) {
    hot_kept += id >= 1000 && id < 1100;
    old_kept += id < 200;
  });
  EXPECT_GE(hot_kept, 95) << "sampled LRU keeps the rows used every round";
  EXPECT_LE(old_kept, 10) << "and evicts those never used again";
}

TEST(EmbeddingTableTest, LfuEvictsTheRowsUsedLeastOften) {
  TableConfig c = Sgd();
  c.capacity = 100;
  c.eviction = Eviction::kLfu;
  EmbeddingTable t(c);
  std::vector<float> out(4);
  for (int round = 0; round < 20; ++round)
    for (uint64_t id = 0; id < 50; ++id) t.Pull({&id, 1}, true, out.data());
  for (uint64_t id = 500; id < 1500; ++id) t.Pull({&id, 1}, true, out.data());  // seen once each
  int frequent_kept = 0;
  t.ForEachRow(0, [&](uint64_t id, const float*) { frequent_kept += id < 50; });
  EXPECT_GE(frequent_kept, 45) << "the rows used 20 times survive 1,000 rows used once";
  EXPECT_LE(t.stats().rows, 100u);
}

TEST(EmbeddingTableTest, MemoryStaysBoundedWhileNewIdsKeepArriving) {
  TableConfig c = Sgd(16);
  c.optimizer = RowOptimizerKind::kAdagrad;
  c.capacity = 5000;
  EmbeddingTable t(c);
  std::vector<uint64_t> ids(500);
  std::vector<float> out(500 * 16), g(500 * 16, 0.01f);
  uint64_t high_water = 0;
  for (uint64_t batch = 0; batch < 200; ++batch) {  // 100,000 distinct ids
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = batch * 500 + i;
    t.Pull(ids, true, out.data());
    t.Push(ids, g.data());
    if (batch == 20) high_water = t.stats().memory_bytes;
  }
  EXPECT_LE(t.stats().rows, 5000u);
  EXPECT_LE(t.stats().memory_bytes, high_water * 11 / 10)
      << "a full table reuses its slots instead of allocating";
}

TEST(EmbeddingTableTest, ForEachRowSinceAMarkListsOnlyTheRowsChangedAfterIt) {
  EmbeddingTable t(Sgd(1));
  std::vector<float> out(3);
  const uint64_t ids[] = {1, 2, 3};
  t.Pull(ids, true, out.data());
  const float g1[] = {1, 1, 1};
  t.Push(ids, g1);
  const uint32_t mark = t.Mark();
  const uint64_t two = 2;
  const float g2[] = {1};
  t.Push({&two, 1}, g2);
  std::set<uint64_t> changed, all;
  t.ForEachRow(mark, [&](uint64_t id, const float*) { changed.insert(id); });
  t.ForEachRow(0, [&](uint64_t id, const float*) { all.insert(id); });
  EXPECT_EQ(changed, std::set<uint64_t>({2}));
  EXPECT_EQ(all, std::set<uint64_t>({1, 2, 3}));
}

TEST(EmbeddingTableTest, RestoreSetsValuesAndOptimizerState) {
  TableConfig c = Sgd(2);
  c.optimizer = RowOptimizerKind::kAdagrad;
  EmbeddingTable t(c);
  ASSERT_EQ(t.row_floats(), 4);
  const float row[] = {0.5f, -0.5f, 4.0f, 1.0f};  // values, then Adagrad's sums
  t.Restore(11, row);
  std::vector<float> saved;
  t.ForEachRow(0, [&](uint64_t id, const float* r) {
    EXPECT_EQ(id, 11u);
    saved.assign(r, r + 4);
  });
  EXPECT_EQ(saved, std::vector<float>(row, row + 4));
  const uint64_t id = 11;
  const float g[] = {2.0f, 0.0f};
  t.Push({&id, 1}, g);
  // n = 4 + 4 = 8: w = 0.5 - 1 * 2 / sqrt(8), from the restored sum, not a fresh one (which
  // would give 0.5 - 2 / sqrt(4.1)).
  EXPECT_NEAR(PullOne(t, 11)[0], 0.5f - 2 / std::sqrt(8.0f), 1e-6);
  t.Clear();
  EXPECT_EQ(t.stats().rows, 0u);
}

TEST(EmbeddingTableTest, ConcurrentPushesLoseNoUpdate) {
  // Four threads push -1 to the same 64 rows 2,000 times each, with lookups beside them: SGD
  // with rate 1 must leave each row where 8,000 sequential updates take it, and every lookup must
  // see whole rows (all coordinates moved by the same amount).
  EmbeddingTable t(Sgd(4));
  std::vector<uint64_t> ids(64);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i * 7919;
  std::vector<float> init(64 * 4);
  t.Pull(ids, true, init.data());
  std::atomic<int> torn{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&] {
      const std::vector<float> g(64 * 4, -1.0f);
      std::vector<float> seen(64 * 4);
      for (int i = 0; i < 2000; ++i) {
        t.Push(ids, g.data());
        if (i % 50 == 0) {
          t.Pull(ids, false, seen.data());
          for (size_t r = 0; r < ids.size(); ++r) {
            const float moved = seen[r * 4] - init[r * 4];
            for (int k = 1; k < 4; ++k)
              if (std::abs(seen[r * 4 + k] - init[r * 4 + k] - moved) > 1e-2f) ++torn;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(torn.load(), 0);
  std::vector<float> final_rows(64 * 4);
  t.Pull(ids, false, final_rows.data());
  for (size_t i = 0; i < final_rows.size(); ++i) {
    float expected = init[i];
    for (int k = 0; k < 8000; ++k) expected -= 1.0f * -1.0f;
    ASSERT_EQ(final_rows[i], expected) << "element " << i;
  }
}

}  // namespace
}  // namespace disttrain::trainer::embedding
