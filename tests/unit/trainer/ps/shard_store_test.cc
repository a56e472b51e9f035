// The parameter server's variable store: copy-on-write blocks, one-step snapshots, step waiters
// and the admission of pushes.
#include "trainer/ps/shard_store.h"

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/shard_store_fixture.h"

namespace disttrain::trainer {
namespace {

using testing::kTwoBlocksAndABit;
using testing::Ones;

TEST(ShardStoreTest, SplitsShardsIntoChunkSizedBlocks) {
  ShardStore store(Ones(), 7, 1);
  ASSERT_EQ(store.shards().size(), 2u);
  EXPECT_EQ(store.shards()[1].name, "w/0");
  EXPECT_EQ(store.shards()[1].num_blocks, 3u);
  ASSERT_EQ(store.blocks().size(), 4u);
  EXPECT_EQ(store.blocks()[3].offset, 2 * kChunkElements);
  EXPECT_EQ(store.blocks()[3].size, 10u);
  EXPECT_EQ(store.total_elements(), kTwoBlocksAndABit + 3);
  EXPECT_EQ(store.global_step(), 7);
}

TEST(ShardStoreTest, AnUpdateNeverChangesABlockThatIsBeingSent) {
  ShardStore store(Ones(), 0, 1);
  const std::vector<float> half(kChunkElements, 0.5f);
  ShardStore::BlockRef sending = store.Read(1);  // as a pull holds it while gRPC sends it
  const float* where = sending->values.get();
  store.Axpy(1, -2.0f, half.data());
  EXPECT_EQ(sending->values[5], 1.0f) << "the block being sent changed under the pull";
  ShardStore::BlockRef now = store.Read(1);
  EXPECT_NE(now->values.get(), where) << "copy-on-write: the update went to a fresh block";
  EXPECT_EQ(now->values[5], 0.0f);
  sending.reset();
  now.reset();
  const float* before = store.Read(1)->values.get();
  store.Axpy(1, 1.0f, half.data());
  EXPECT_EQ(store.Read(1)->values.get(), before) << "nobody holds it: updated in place";
  EXPECT_EQ(store.Read(1)->values[kChunkElements - 1], 0.5f);
}

TEST(ShardStoreTest, ASnapshotIsOneStepsValues) {
  // The writer applies a fixed number of whole steps and the reader snapshots until it is done,
  // so both ends are bounded: absl::Mutex is not fair, and a writer that retakes the lock in a
  // loop until the reader has its snapshots can starve the reader for minutes under TSan.
  constexpr int kSteps = 1000;
  ShardStore store(Ones(), 0, 1);
  const std::vector<float> ones(kChunkElements, 1.0f);
  std::atomic<bool> reading{false}, done{false};
  std::thread writer([&] {
    while (!reading) std::this_thread::yield();  // start together, so the steps overlap snapshots
    for (int s = 0; s < kSteps; ++s) {
      ShardStore::WholeStep whole(&store);
      for (size_t i = 0; i < store.blocks().size(); ++i) store.Axpy(i, 1.0f, ones.data());
    }
    done = true;
  });
  bool last = false;
  std::string torn;  // the first torn snapshot; the loop stops there and the writer is still joined
  reading = true;
  while (!last && torn.empty()) {
    last = done;  // one more snapshot after the writer ends: it must see the final step
    int64_t step = 0;
    std::vector<ShardStore::BlockRef> snap = store.Snapshot(&step);
    for (size_t i = 0; i < snap.size() && torn.empty(); ++i)
      if (snap[i]->values[0] != 1.0f + static_cast<float>(step))
        torn = absl::StrCat("block ", i, " holds ", snap[i]->values[0], " at step ", step);
    if (last) EXPECT_EQ(step, kSteps);
  }
  writer.join();
  EXPECT_EQ(torn, "") << "a torn snapshot";
}

TEST(ShardStoreTest, WaitersRunAtTheirStepAtTheirDeadlineOrOnClose) {
  ShardStore store(Ones(), 0, 1);
  std::vector<std::string> ran;
  store.WhenStepReaches(0, absl::InfiniteFuture(), [&] { ran.push_back("now"); });
  store.WhenStepReaches(2, absl::InfiniteFuture(), [&] { ran.push_back("step2"); });
  store.WhenStepReaches(5, absl::Now() + absl::Milliseconds(1), [&] { ran.push_back("deadline"); });
  store.WhenStepReaches(9, absl::InfiniteFuture(), [&] { ran.push_back("close"); });
  EXPECT_EQ(ran, std::vector<std::string>{"now"});
  store.AdvanceStep();
  store.AdvanceStep();
  EXPECT_EQ(ran, (std::vector<std::string>{"now", "step2"}));
  store.ExpireWaiters(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(ran, (std::vector<std::string>{"now", "step2", "deadline"}));
  store.Close();
  EXPECT_EQ(ran, (std::vector<std::string>{"now", "step2", "deadline", "close"}));
}

TEST(ShardStoreTest, PushesAreAdmittedUpToTheLimitAndInTurn) {
  ShardStore store(Ones(), 0, 2);
  std::vector<int> admitted;
  for (int i = 0; i < 4; ++i) store.AdmitPush([&admitted, i] { admitted.push_back(i); });
  EXPECT_EQ(admitted, (std::vector<int>{0, 1})) << "two at once; the others wait";
  store.EndPush();
  EXPECT_EQ(admitted, (std::vector<int>{0, 1, 2})) << "an ended push lets the first waiting in";
  store.EndPush();
  store.EndPush();
  store.EndPush();
  store.AdmitPush([&admitted] { admitted.push_back(4); });
  store.AdmitPush([&admitted] { admitted.push_back(5); });
  EXPECT_EQ(admitted, (std::vector<int>{0, 1, 2, 3, 4, 5})) << "both places free again";
  store.AdmitPush([&admitted] { admitted.push_back(6); });
  EXPECT_EQ(admitted.size(), 6u) << "and no more than two";
}

}  // namespace
}  // namespace disttrain::trainer
