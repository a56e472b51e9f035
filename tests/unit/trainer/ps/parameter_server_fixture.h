// The fixture of the parameter server's unit tests (parameter_server_test.cc,
// push_pull_reactor_test.cc, snapshot_test.cc): one server behind a real gRPC server on loopback,
// driven chunk by chunk through the generated (protobuf) stub, so the server's hand-written wire
// path meets ordinary protobuf. Its variables: a shard "w/0" of two full chunks and a small one
// "b/0".
#ifndef DISTTRAIN_TESTS_UNIT_TRAINER_PS_PARAMETER_SERVER_FIXTURE_H_
#define DISTTRAIN_TESTS_UNIT_TRAINER_PS_PARAMETER_SERVER_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "trainer/ps/parameter_server.h"

namespace disttrain::trainer::testing {

inline constexpr size_t kShard = 2 * kChunkElements;  // two full chunks
inline constexpr size_t kSmall = 1000;

inline std::string Bytes(const std::vector<float>& v, size_t from, size_t n) {
  return std::string(reinterpret_cast<const char*>(v.data() + from), n * sizeof(float));
}

inline v1::PushPullRequest Chunk(const std::string& shard, uint64_t offset, std::string data) {
  v1::PushPullRequest r;
  r.mutable_chunk()->set_shard(shard);
  r.mutable_chunk()->set_offset(offset);
  r.mutable_chunk()->set_data(std::move(data));
  return r;
}

// Polls (at most `bound`) until `observed` holds: a test waits for what the server did, never
// sleeps to let it happen.
inline bool Eventually(const std::function<bool()>& observed,
                       absl::Duration bound = absl::Seconds(20)) {
  const absl::Time end = absl::Now() + bound;
  while (!observed()) {
    if (absl::Now() > end) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

class ParameterServerTest : public ::testing::Test {
 protected:
  void Start(std::unique_ptr<UpdateRule> rule, int push_buffers = 1,
             const Clock* clock = RealClock::Get()) {
    service_ = std::make_unique<ParameterServer>(std::move(rule), push_buffers, clock);
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

  // A clock for Start(), declared first so that it outlives the server's ticker thread, which
  // reads it until the server is gone (a FakeClock in a test's body is destroyed before).
  FakeClock fake_clock_;
  std::unique_ptr<ParameterServer> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ParameterServer::Stub> stub_;
  std::vector<float> big_, small_;
};

using Shape = std::function<void(std::vector<v1::PushPullRequest>*)>;
inline const Shape kAsIs = [](std::vector<v1::PushPullRequest>*) {};

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TRAINER_PS_PARAMETER_SERVER_FIXTURE_H_
