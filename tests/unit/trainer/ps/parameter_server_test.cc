// The parameter server behind a real gRPC server on loopback, driven chunk by chunk through the
// generated (protobuf) stub, so the server's hand-written wire path meets ordinary protobuf: a
// push is applied only when every element of every shard arrived exactly once and the stream
// ended normally.
#include "trainer/ps/parameter_server.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "trainer/checkpoint/snapshot.h"

namespace disttrain::trainer {
namespace {

constexpr size_t kShard = 2 * kChunkElements;  // two full chunks
constexpr size_t kSmall = 1000;

std::string Bytes(const std::vector<float>& v, size_t from, size_t n) {
  return std::string(reinterpret_cast<const char*>(v.data() + from), n * sizeof(float));
}

v1::PushPullRequest Chunk(const std::string& shard, uint64_t offset, std::string data) {
  v1::PushPullRequest r;
  r.mutable_chunk()->set_shard(shard);
  r.mutable_chunk()->set_offset(offset);
  r.mutable_chunk()->set_data(std::move(data));
  return r;
}

// Polls (at most `bound`) until `observed` holds: a test waits for what the server did, never
// sleeps to let it happen.
bool Eventually(const std::function<bool()>& observed, absl::Duration bound = absl::Seconds(20)) {
  const absl::Time end = absl::Now() + bound;
  while (!observed()) {
    if (absl::Now() > end) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

class ParameterServerTest : public ::testing::Test {
 protected:
  void Start(std::unique_ptr<UpdateRule> rule, int push_buffers = 1) {
    service_ = std::make_unique<ParameterServer>(std::move(rule), push_buffers);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.SetMaxReceiveMessageSize(8 << 20);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    args.SetMaxSendMessageSize(64 << 20);
    stub_ = v1::ParameterServer::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args));
    big_.assign(kShard, 0.0f);
    small_.assign(kSmall, 0.0f);
    for (size_t i = 0; i < kShard; ++i) big_[i] = static_cast<float>(i % 97);
    for (size_t i = 0; i < kSmall; ++i) small_[i] = static_cast<float>(i);
    grpc::ClientContext ctx;
    v1::InitResponse resp;
    auto w = stub_->Init(&ctx, &resp);
    v1::InitRequest h;
    for (auto [name, size] : {std::pair<const char*, size_t>{"w/0", kShard}, {"b/0", kSmall}}) {
      auto* s = h.mutable_header()->add_shards();
      s->set_shard(name);
      s->set_size(size);
    }
    ASSERT_TRUE(w->Write(h));
    for (auto [name, values] :
         {std::pair<const char*, std::vector<float>*>{"w/0", &big_}, {"b/0", &small_}}) {
      for (size_t off = 0; off < values->size(); off += kChunkElements) {
        v1::InitRequest c;
        c.mutable_chunk()->set_shard(name);
        c.mutable_chunk()->set_offset(off);
        c.mutable_chunk()->set_data(
            Bytes(*values, off, std::min(kChunkElements, values->size() - off)));
        ASSERT_TRUE(w->Write(c));
      }
    }
    w->WritesDone();
    ASSERT_TRUE(w->Finish().ok());
  }

  // Everything the server holds, by shard, and its global step: a PushPull without a push.
  std::pair<std::map<std::string, std::vector<float>>, int64_t> Pull() {
    grpc::ClientContext ctx;
    auto rw = stub_->PushPull(&ctx);
    v1::PushPullRequest h;
    h.mutable_header()->set_push(false);
    EXPECT_TRUE(rw->Write(h));
    rw->WritesDone();
    std::map<std::string, std::vector<float>> out = {{"w/0", std::vector<float>(kShard)},
                                                     {"b/0", std::vector<float>(kSmall)}};
    v1::PushPullReply reply;
    int64_t step = -1;
    size_t elements = 0;
    while (rw->Read(&reply)) {
      if (reply.has_status()) {
        EXPECT_EQ(step, -1) << "one status, first";
        step = reply.status().global_step();
        continue;
      }
      const v1::TensorChunk& c = reply.chunk();
      std::memcpy(out[c.shard()].data() + c.offset(), c.data().data(), c.data().size());
      elements += c.data().size() / sizeof(float);
    }
    EXPECT_TRUE(rw->Finish().ok());
    EXPECT_EQ(elements, kShard + kSmall) << "every element pulled exactly once";
    return {out, step};
  }

  // A push of the gradient 1.0 everywhere, as `worker` at `step`, whose messages are edited by
  // `shape` before they are sent; `cancel_after` > 0 cancels the call after that many messages.
  grpc::Status Push(const std::string& worker, int64_t step,
                    const std::function<void(std::vector<v1::PushPullRequest>*)>& shape,
                    size_t cancel_after = 0, v1::PushPullStatus* status = nullptr,
                    int64_t min_step = 0, int64_t wait_ms = 0) {
    const std::vector<float> ones_big(kShard, 1.0f), ones_small(kSmall, 1.0f);
    std::vector<v1::PushPullRequest> msgs;
    v1::PushPullRequest h;
    h.mutable_header()->set_step(step);
    h.mutable_header()->set_worker(worker);
    h.mutable_header()->set_push(true);
    h.mutable_header()->set_min_step(min_step);
    h.mutable_header()->set_wait_ms(wait_ms);
    msgs.push_back(h);
    for (size_t off = 0; off < kShard; off += kChunkElements)
      msgs.push_back(Chunk("w/0", off, Bytes(ones_big, off, kChunkElements)));
    msgs.push_back(Chunk("b/0", 0, Bytes(ones_small, 0, kSmall)));
    shape(&msgs);
    grpc::ClientContext ctx;
    auto w = stub_->PushPull(&ctx);
    for (size_t i = 0; i < msgs.size(); ++i) {
      if (cancel_after > 0 && i == cancel_after) {
        // The server has read the chunks sent so far (messages 1..i-1) before the cancel.
        const int64_t chunks = static_cast<int64_t>(i) - 1;
        EXPECT_TRUE(Eventually(
            [&] { return service_->observed(Partitions::CallEvent::kChunkRead) >= chunks; }));
        ctx.TryCancel();
        break;
      }
      if (!w->Write(msgs[i])) break;
    }
    if (cancel_after == 0) w->WritesDone();
    v1::PushPullReply reply;
    while (w->Read(&reply)) {
      if (reply.has_status() && status != nullptr) *status = reply.status();
    }
    return w->Finish();
  }

  void ExpectUnchanged() {
    auto [values, step] = Pull();
    EXPECT_EQ(step, 0);
    EXPECT_EQ(values["w/0"], big_) << "a torn or malformed push changed the variables";
    EXPECT_EQ(values["b/0"], small_);
  }

  std::unique_ptr<ParameterServer> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ParameterServer::Stub> stub_;
  std::vector<float> big_, small_;
};

using Shape = std::function<void(std::vector<v1::PushPullRequest>*)>;
const Shape kAsIs = [](std::vector<v1::PushPullRequest>*) {};

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

namespace disttrain::trainer {
namespace {

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

TEST_F(ParameterServerTest, SyncStepsFollowTheReplicasThatJoinAndLeave) {  // #37
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true));
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::InfiniteDuration());
  v1::PushPullStatus waited;  // chief-0 pushes, then waits for step 1 as a sync replica does
  std::thread chief([&] { EXPECT_TRUE(Push("chief-0", 0, kAsIs, 0, &waited, 1, 20'000).ok()); });
  ASSERT_TRUE(Eventually([&] { return service_->store(0)->waiting_pulls() == 1; }));
  ASSERT_TRUE(Push("worker-1", 0, kAsIs).ok()) << "a worker scaled in";
  EXPECT_EQ(service_->live_replicas(), 3);
  grpc::ClientContext ctx;
  v1::LeaveRequest leave;
  leave.set_worker("worker-0");
  v1::LeaveResponse left;
  ASSERT_TRUE(stub_->Leave(&ctx, leave, &left).ok());
  EXPECT_EQ(left.live_replicas(), 2);
  chief.join();
  EXPECT_EQ(waited.global_step(), 1) << "the leave completed the step the chief waited for";
  EXPECT_EQ(waited.live_replicas(), 2);
  EXPECT_EQ(Pull().first["w/0"][9], big_[9] - 0.5f) << "chief-0's and worker-1's average";
}

TEST_F(ParameterServerTest, AReplicaSilentWhileAnotherCallsStopsCountingAfterTheTimeout) {
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true));
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::Milliseconds(300));
  ASSERT_TRUE(Push("chief-0", 0, kAsIs).ok());
  // chief-0 keeps calling (Describe, as a replica waiting for the servers); worker-0 never does.
  EXPECT_TRUE(Eventually([&] {
    grpc::ClientContext ctx;
    v1::DescribeRequest req;
    req.set_worker("chief-0");
    v1::DescribeResponse resp;
    EXPECT_TRUE(stub_->Describe(&ctx, req, &resp).ok());
    return service_->store(0)->global_step() == 1;
  })) << "worker-0's silence passed the timeout: the step went on without it";
  EXPECT_EQ(service_->live_replicas(), 1);
}

TEST_F(ParameterServerTest, NobodyStopsCountingWhileEveryReplicaIsSilent) {
  Start(MakeSyncSgd(0.5f, 2, /*every_replica=*/true));
  service_->FollowReplicas({"chief-0", "worker-0"}, absl::Milliseconds(300));
  ASSERT_TRUE(Push("chief-0", 0, kAsIs).ok());
  const int64_t since = service_->silence_checks();  // then all pause, 15 checks (5x the timeout)
  ASSERT_TRUE(Eventually([&] { return service_->silence_checks() >= since + 15; }));
  EXPECT_EQ(service_->live_replicas(), 2);
  EXPECT_EQ(service_->store(0)->global_step(), 0) << "the step still waits for worker-0";
}

}  // namespace
}  // namespace disttrain::trainer
