// One PushPull call on the server (push_pull_reactor.cc), through the generated stub: a push is
// applied only when every element of every shard arrived exactly once and the stream ended
// normally; the reply carries the step, and a synchronous pull waits for the step it asks for.
#include "trainer/ps/push_pull_reactor.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/trainer/ps/parameter_server_fixture.h"

namespace disttrain::trainer {
namespace {

using testing::Bytes;
using testing::Chunk;
using testing::Eventually;
using testing::kAsIs;
using testing::kShard;
using testing::kSmall;
using testing::ParameterServerTest;
using testing::Shape;

TEST_F(ParameterServerTest, AppliesACompletePush) {
  Start(MakeAsyncSgd(0.5f));
  ASSERT_TRUE(Push("w0", 0, kAsIs).ok());
  auto [values, step] = Pull();
  EXPECT_EQ(step, 1);
  EXPECT_EQ(values["w/0"][5], big_[5] - 0.5f);
  EXPECT_EQ(values["b/0"][kSmall - 1], small_[kSmall - 1] - 0.5f);
}

TEST_F(ParameterServerTest, ACancelledPushChangesNothing) {
  Start(MakeAsyncSgd(0.5f));
  // Header plus the first of three chunks: about a quarter of the gradient.
  grpc::Status s = Push("w0", 0, kAsIs, /*cancel_after=*/2);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
  // The client sees CANCELLED at once; once the server's call has ended (a broken one applies
  // what it read), a complete push must be the only update.
  ASSERT_TRUE(Eventually([&] { return service_->observed(Partitions::CallEvent::kEnded) == 1; }));
  ExpectUnchanged();
  ASSERT_TRUE(Push("w0", 0, kAsIs).ok());
  auto [values, step] = Pull();
  EXPECT_EQ(step, 1);
  EXPECT_EQ(values["w/0"][3], big_[3] - 0.5f);
}

TEST_F(ParameterServerTest, TheReplyOfAPushIsTheUpdatedVariables) {
  Start(MakeAsyncSgd(0.5f));
  v1::PushPullStatus status;
  ASSERT_TRUE(Push("w0", 0, kAsIs, 0, &status).ok());
  EXPECT_EQ(status.global_step(), 1);
  EXPECT_FALSE(status.dropped());
  EXPECT_EQ(status.incarnation(), service_->incarnation());
}

class ConcurrentPushTest : public ParameterServerTest, public ::testing::WithParamInterface<int> {};

// One push received at a time per partition (the default; the others wait their turn) or three
// received at once: every push is applied once, whole.
TEST_P(ConcurrentPushTest, ConcurrentPushesAreEachAppliedOnce) {
  Start(MakeAsyncSgd(0.5f), GetParam());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) failures += !Push(absl::StrCat("w", t), 0, kAsIs).ok();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  auto [values, step] = Pull();
  EXPECT_EQ(step, 24);
  for (size_t i : {size_t{0}, kChunkElements + 3, kShard - 1})
    EXPECT_EQ(values["w/0"][i], big_[i] - 12.0f) << i;
  EXPECT_EQ(values["b/0"][7], small_[7] - 12.0f);
}

INSTANTIATE_TEST_SUITE_P(PushBuffers, ConcurrentPushTest, ::testing::Values(1, 3));

TEST_F(ParameterServerTest, ACallThatEndsWhileItsPushWaitsForItsTurnIsForgotten) {
  Start(MakeAsyncSgd(0.5f));  // one push received at a time
  const std::vector<float> ones(kShard, 1.0f);
  v1::PushPullRequest header;
  header.mutable_header()->set_push(true);
  header.mutable_header()->set_pull_early(true);
  // A holds the turn: its push is half sent.
  grpc::ClientContext a_ctx;
  auto a = stub_->PushPull(&a_ctx);
  ASSERT_TRUE(a->Write(header));
  ASSERT_TRUE(a->Write(Chunk("w/0", 0, Bytes(ones, 0, kChunkElements))));
  // B waits for the turn while its pull is already written; it reads some, then goes away.
  {
    grpc::ClientContext b_ctx;
    auto b = stub_->PushPull(&b_ctx);
    ASSERT_TRUE(b->Write(header));
    v1::PushPullReply reply;
    ASSERT_TRUE(b->Read(&reply));
    EXPECT_TRUE(reply.has_status());
    b_ctx.TryCancel();
    EXPECT_EQ(b->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  // B's call cannot end while its push waits for A's turn (no read holds it): it ends once it
  // gets the turn. (The server may learn only then that B went away: a cancelled client is seen
  // by a failed read or write, and B's pull was written before it left.)
  EXPECT_EQ(service_->observed(Partitions::CallEvent::kEnded), 0);
  // A finishes: the turn passes to B's ended call, which must only hand it on.
  ASSERT_TRUE(a->Write(Chunk("w/0", kChunkElements, Bytes(ones, kChunkElements, kChunkElements))));
  ASSERT_TRUE(a->Write(Chunk("b/0", 0, Bytes(ones, 0, kSmall))));
  a->WritesDone();
  v1::PushPullReply reply;
  while (a->Read(&reply)) {
  }
  ASSERT_TRUE(a->Finish().ok());
  ASSERT_TRUE(Push("c", 0, kAsIs).ok()) << "the turn came back";
  EXPECT_TRUE(Eventually([&] { return service_->observed(Partitions::CallEvent::kEnded) == 3; }))
      << "A's, B's and C's calls ended";
  auto [values, step] = Pull();
  EXPECT_EQ(step, 2) << "A's and C's pushes, not B's";
  EXPECT_EQ(values["w/0"][9], big_[9] - 1.0f);
}

TEST_F(ParameterServerTest, ASyncPullWaitsForTheStepItAsksFor) {
  Start(MakeSyncSgd(0.5f, 2));
  v1::PushPullStatus first;
  // The first of two gradients, asking for step 1: nobody completes the step within 300 ms, so
  // the reply comes at the deadline with step 0.
  const absl::Time start = absl::Now();
  ASSERT_TRUE(Push("w0", 0, kAsIs, 0, &first, /*min_step=*/1, /*wait_ms=*/300).ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(250));
  EXPECT_EQ(first.global_step(), 0);
  v1::PushPullStatus second;
  ASSERT_TRUE(Push("w1", 0, kAsIs, 0, &second, 1, 20'000).ok());
  EXPECT_EQ(second.global_step(), 1) << "w1's gradient completed the step";
  // Step 1: w0's pull waits while w1 computes; the step completes when w1 pushes.
  v1::PushPullStatus waited;
  std::atomic<bool> answered{false};
  std::thread w0([&] {
    EXPECT_TRUE(Push("w0", 1, kAsIs, 0, &waited, 2, 20'000).ok());
    answered = true;
  });
  // The server holds w0's pull, waiting for step 2.
  ASSERT_TRUE(Eventually([&] { return service_->store(0)->waiting_pulls() == 1; }));
  EXPECT_FALSE(answered) << "the pull did not wait for step 2";
  ASSERT_TRUE(Push("w1", 1, kAsIs).ok());
  w0.join();
  EXPECT_EQ(waited.global_step(), 2);
  EXPECT_FALSE(waited.dropped());
}

struct Malformed {
  std::string name;
  Shape shape;
  grpc::StatusCode code;
};

class MalformedPushTest : public ParameterServerTest,
                          public ::testing::WithParamInterface<Malformed> {};

TEST_P(MalformedPushTest, IsRefusedWithAPreciseCodeAndChangesNothing) {
  Start(MakeAsyncSgd(0.5f));
  grpc::Status s = Push("w0", 0, GetParam().shape);
  EXPECT_EQ(s.error_code(), GetParam().code) << s.error_message();
  ExpectUnchanged();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedPushTest,
    ::testing::Values(
        Malformed{"EndsAfterAQuarter", [](auto* m) { m->resize(2); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"MissesAShard", [](auto* m) { m->pop_back(); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"Headerless", [](auto* m) { m->erase(m->begin()); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"SecondHeader", [](auto* m) { m->insert(m->begin() + 2, (*m)[0]); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"DuplicatedChunk", [](auto* m) { (*m)[2] = (*m)[1]; },
                  grpc::StatusCode::ALREADY_EXISTS},
        Malformed{"DuplicatedChunkAtTheEnd", [](auto* m) { m->push_back((*m)[3]); },
                  grpc::StatusCode::ALREADY_EXISTS},
        Malformed{"OutOfOrder", [](auto* m) { std::swap((*m)[1], (*m)[2]); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"PastTheShardEnd",
                  [](auto* m) { (*m)[3].mutable_chunk()->set_offset(kSmall - 10); },
                  grpc::StatusCode::OUT_OF_RANGE},
        Malformed{"HugeOffset",
                  [](auto* m) { (*m)[1].mutable_chunk()->set_offset(~uint64_t{0} - 1); },
                  grpc::StatusCode::OUT_OF_RANGE},
        Malformed{"MisalignedBytes",
                  [](auto* m) { m->back().mutable_chunk()->mutable_data()->pop_back(); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"EmptyChunk", [](auto* m) { m->insert(m->begin() + 1, Chunk("w/0", 0, "")); },
                  grpc::StatusCode::INVALID_ARGUMENT},
        Malformed{"UnknownShard", [](auto* m) { (*m)[3].mutable_chunk()->set_shard("nope/0"); },
                  grpc::StatusCode::NOT_FOUND},
        Malformed{"Oversized",  // one message over the server's 8 MiB limit
                  [](auto* m) { (*m)[1].mutable_chunk()->set_data(std::string(9 << 20, '\0')); },
                  grpc::StatusCode::RESOURCE_EXHAUSTED}),
    [](const auto& info) { return info.param.name; });

TEST_F(ParameterServerTest, ATornPushDoesNotCountAsAReplicaInSyncMode) {
  Start(MakeSyncSgd(0.5f, 2));
  EXPECT_FALSE(Push("w0", 0, [](auto* m) { m->resize(2); }).ok());
  ASSERT_TRUE(Push("w1", 0, kAsIs).ok());
  // One complete gradient of the two the step needs: nothing applied yet.
  ExpectUnchanged();
  ASSERT_TRUE(Push("w0", 0, kAsIs).ok());
  EXPECT_EQ(Pull().second, 1);
}

}  // namespace
}  // namespace disttrain::trainer
