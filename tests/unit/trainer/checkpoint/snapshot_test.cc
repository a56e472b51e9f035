// The chief's checkpoints as a stream of parts to ps 0 and back to the evaluator, and the slot in
// which ps 0 keeps the newest one.
#include "trainer/checkpoint/snapshot.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/trainer/ps/parameter_server_fixture.h"

namespace disttrain::trainer {
namespace {

using testing::Eventually;
using testing::kShard;
using testing::ParameterServerTest;

TEST(SnapshotReaderTest, RejectsChunksOutOfOrderAndIncompleteSnapshots) {
  Checkpoint c{7, {{"w", 4}}, {{1, 2, 3, 4}}, ""};
  std::vector<v1::SnapshotPart> parts;
  WriteSnapshotParts(c, [&](const v1::SnapshotPart& p) {
    parts.push_back(p);
    return true;
  });
  ASSERT_EQ(parts.size(), 2u);
  SnapshotReader missing;
  ASSERT_TRUE(missing.Add(parts[0]).ok());
  EXPECT_EQ(missing.Finish().status().code(), absl::StatusCode::kInvalidArgument);
  SnapshotReader no_header;
  EXPECT_FALSE(no_header.Add(parts[1]).ok());
  SnapshotReader wrong_offset;
  ASSERT_TRUE(wrong_offset.Add(parts[0]).ok());
  parts[1].mutable_chunk()->set_offset(1);
  EXPECT_FALSE(wrong_offset.Add(parts[1]).ok());
}

// The chief's checkpoints reach the evaluator through ps 0: the newest is kept, a fetch waits
// for one newer than the evaluator's last, and a variable larger than one chunk arrives whole.
TEST_F(ParameterServerTest, KeepsTheNewestSnapshotForTheEvaluator) {
  Start(MakeAsyncSgd(0.5f));
  Checkpoint c{100, {{"w", kShard + 5}, {"b", 3}}, {std::vector<float>(kShard + 5), {1, 2, 3}}, ""};
  for (size_t i = 0; i < c.values[0].size(); ++i) c.values[0][i] = static_cast<float>(i) * 0.5f;
  ASSERT_TRUE(PublishSnapshot(stub_.get(), c).ok());
  absl::StatusOr<Checkpoint> got = FetchSnapshot(stub_.get(), 50, absl::ZeroDuration());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->global_step, 100);
  EXPECT_TRUE(SameVariables(got->variables, c.variables));
  EXPECT_EQ(got->values, c.values);
  EXPECT_EQ(FetchSnapshot(stub_.get(), 100, absl::Milliseconds(50)).status().code(),
            absl::StatusCode::kNotFound);
  std::thread later([&] {
    // Published while the fetch below waits for it.
    EXPECT_TRUE(Eventually([&] { return service_->snapshots().waiting() == 1; }));
    Checkpoint newer = c;
    newer.global_step = 200;
    EXPECT_TRUE(PublishSnapshot(stub_.get(), newer).ok());
  });
  got = FetchSnapshot(stub_.get(), 100, absl::Seconds(10));  // waits for the next checkpoint
  later.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->global_step, 200);
}

// A stopping ps 0 holds the chief's final checkpoint until the evaluator has it: the wait ends
// at the fetch, not at the bound, and only a final snapshot is waited for.
TEST_F(ParameterServerTest, AStoppingServerWaitsUntilTheFinalSnapshotIsFetched) {
  Start(MakeAsyncSgd(0.5f));
  SnapshotSlot& slot = service_->snapshots();
  EXPECT_FALSE(slot.asked());
  EXPECT_EQ(slot.AwaitFinalDelivered(absl::Now() + absl::Seconds(30)),
            SnapshotSlot::FinalState::kNone)
      << "nothing to hold";
  Checkpoint c{300, {{"w", 4}}, {{1, 2, 3, 4}}, ""};
  ASSERT_TRUE(PublishSnapshot(stub_.get(), c).ok());
  EXPECT_EQ(slot.AwaitFinalDelivered(absl::Now() + absl::Seconds(30)),
            SnapshotSlot::FinalState::kNone)
      << "not the final checkpoint: a stop is not held";
  c.global_step = 400;
  c.final = true;
  ASSERT_TRUE(PublishSnapshot(stub_.get(), c).ok());
  EXPECT_EQ(slot.AwaitFinalDelivered(absl::Now() + absl::Milliseconds(20)),
            SnapshotSlot::FinalState::kNotFetched)
      << "bounded";
  std::thread evaluator([&] {
    absl::StatusOr<Checkpoint> got = FetchSnapshot(stub_.get(), 300, absl::Seconds(10));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->global_step, 400);
    EXPECT_TRUE(got->final) << "the header carries it";
  });
  const absl::Time start = absl::Now();
  EXPECT_EQ(slot.AwaitFinalDelivered(start + absl::Seconds(60)),
            SnapshotSlot::FinalState::kDelivered);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30)) << "ended by the fetch, not the bound";
  evaluator.join();
  EXPECT_TRUE(slot.asked());
}

}  // namespace
}  // namespace disttrain::trainer
