// One PushPull call from a replica to one parameter server (push_pull_call.cc) against a real
// server on loopback: the gradient goes out chunk by chunk, the variables come back into place,
// and a reply that does not fit the replica's shards or arrives too late fails the call.
#include "trainer/worker/push_pull_call.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/loopback_servers.h"
#include "trainer/wire/shard_plan.h"
#include "trainer/worker/ps_client.h"

namespace disttrain::trainer {
namespace {

using ::testing::HasSubstr;

class PushPullCallTest : public ::testing::Test {
 protected:
  // One server holding `vars_` (every value 1) at step 0, and a connection to it.
  void Start(const testing::LoopbackServers::MakeRule& rule) {
    servers_.Start(1, rule);
    PsClient chief(servers_.addresses(), vars_, "chief-0");
    ASSERT_TRUE(testing::InitAll(&chief, Filled(1.0f), 0).ok());
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(servers_.addresses()[0], grpc::InsecureChannelCredentials());
    ASSERT_TRUE(channel->WaitForConnected(absl::ToChronoTime(absl::Now() + absl::Seconds(20))));
    stub_ = std::make_unique<grpc::GenericStub>(channel);
    for (const Shard& s : plan_) shards_[s.name] = &s;
  }
  Params Filled(float v) const {
    Params p;
    for (const VariableSpec& var : vars_) p.emplace_back(var.size, v);
    return p;
  }
  static v1::PushPullHeader Header(bool push) {
    v1::PushPullHeader h;
    h.set_worker("worker-0");
    h.set_push(push);
    return h;
  }

  // A variable of two full chunks and a bit, and a small one.
  const std::vector<VariableSpec> vars_ = {{"w", 2 * kChunkElements + 17}, {"b", 5}};
  const std::vector<Shard> plan_ = PlanShards(vars_, 1);
  std::map<std::string, const Shard*> shards_;
  testing::LoopbackServers servers_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(PushPullCallTest, PushesEveryChunkAndReadsTheUpdatedVariablesIntoPlace) {
  Start([] { return MakeAsyncSgd(0.25f); });
  const Params grads = Filled(2.0f);
  Params params = Filled(-7.0f);  // what the pull must overwrite, everywhere
  PushPullCall call(Header(/*push=*/true), shards_, &grads, nullptr, &params);
  call.Start(stub_.get(), absl::Seconds(30));
  ASSERT_TRUE(call.Wait().ok());
  EXPECT_EQ(call.status().global_step(), 1) << "the server applied one whole push";
  EXPECT_EQ(params, Filled(0.5f)) << "1 - 0.25 * 2 in every element";
}

TEST_F(PushPullCallTest, ReleasesTheGradientOnceTheCallEnded) {
  Start([] { return MakeAsyncSgd(0.25f); });
  const Params grads = Filled(2.0f);
  Params params = Filled(0.0f);
  absl::Notification released;
  PushPullCall call(Header(/*push=*/true), shards_, &grads,
                    std::shared_ptr<const void>(nullptr, [&](const void*) { released.Notify(); }),
                    &params);
  call.Start(stub_.get(), absl::Seconds(30));
  ASSERT_TRUE(call.Wait().ok());
  EXPECT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "the replica could never reuse its gradient";
}

TEST_F(PushPullCallTest, AReplyOfAShardTheReplicaDoesNotHoldFailsTheCall) {
  Start([] { return MakeAsyncSgd(0.25f); });
  std::map<std::string, const Shard*> w_only;
  for (const auto& [name, s] : shards_) {
    if (s->variable == 0) w_only[name] = s;
  }
  Params params = Filled(0.0f);
  PushPullCall call(Header(/*push=*/false), w_only, nullptr, nullptr, &params);
  call.Start(stub_.get(), absl::Seconds(30));
  const absl::Status s = call.Wait();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown shard b/"));
}

TEST_F(PushPullCallTest, APullStillWaitingAtItsTimeoutIsDeadlineExceeded) {
  Start([] { return MakeSyncSgd(0.25f, 2); });
  v1::PushPullHeader h = Header(/*push=*/false);
  h.set_min_step(1);  // nobody pushes: the server would hold the pull for 5 s
  h.set_wait_ms(5000);
  Params params = Filled(0.0f);
  PushPullCall call(h, shards_, nullptr, nullptr, &params);
  call.Start(stub_.get(), absl::Milliseconds(200));
  EXPECT_EQ(call.Wait().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace disttrain::trainer
