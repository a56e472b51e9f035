#include "trainer/ps/push_pull_reactor.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "trainer/metrics/trainer_metrics.h"

namespace disttrain::trainer {

namespace {
constexpr int64_t kMaxWaitMs = 60'000;
}  // namespace

PushPullReactor::PushPullReactor(Partitions* server, grpc::CallbackServerContext* ctx)
    : server_(server), ctx_(ctx) {
  StartRead(&in_);
}

void PushPullReactor::OnReadDone(bool ok) {
  if (!have_header_) {
    OnHeader(ok);
  } else {
    OnChunk(ok);
  }
}

void PushPullReactor::OnHeader(bool ok) {
  have_header_ = true;
  if (!ok || !decoded_.Parse(in_) || !decoded_.ParseField1(&header_)) {
    return Fail(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "PushPull must start with a header"));
  }
  if (header_.partition() < 0 || header_.partition() >= server_->partitions()) {
    return Fail(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                             absl::StrCat("partition ", header_.partition(), " of a server with ",
                                          server_->partitions())));
  }
  rule_ = &server_->rule(header_.partition());
  store_ = server_->store(header_.partition());
  if (store_ == nullptr)
    return Fail(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "not initialized"));
  server_->Seen(header_.worker(), header_.push());
  if (!header_.push()) return WaitAndReply();
  // Asynchronous and asked for: the variables go out while the gradient comes in.
  early_ = header_.pull_early() && !rule_->consistent_pulls();
  if (early_) WaitAndReply();
  {
    absl::MutexLock lock(&mu_);
    admitting_ = true;
  }
  store_->AdmitPush([this] { Admitted(); });
}

void PushPullReactor::Admitted() {
  std::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    admitting_ = false;
    if (deferred_finish_.has_value()) {  // the pull failed while the push waited for its turn
      finished_ = true;
      finish = std::move(deferred_finish_);
    } else {
      push_ = std::make_unique<ReceivedPush>(*store_);
      // Under the lock: a failing pull's FinishOnce comes after the read has started, and the
      // outstanding read keeps the call (and this reactor) alive until it completes.
      StartRead(&in_);
    }
  }
  if (finish.has_value()) {
    store_->EndPush();  // the turn goes on to the next push
    Finish(*finish);
  }
}

void PushPullReactor::OnChunk(bool ok) {
  if (ok) {
    server_->Observe(Partitions::CallEvent::kChunkRead);
    if (!decoded_.Parse(in_))
      return Fail(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, decoded_.error()));
    if (!decoded_.is_chunk()) {
      return Fail(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected chunks after the header"));
    }
    grpc::Status s = push_->Add(decoded_.shard(), decoded_.offset(), decoded_.TakeData());
    if (!s.ok()) return Fail(s);
    return StartRead(&in_);
  }
  // The stream ended: applied only when the client half-closed and every element arrived.
  if (ctx_->IsCancelled()) {
    return Fail(grpc::Status(grpc::StatusCode::CANCELLED, "push cancelled; nothing was applied"));
  }
  if (grpc::Status s = push_->Finish(); !s.ok()) return Fail(s);
  dropped_ = rule_->Apply(header_.step(), *push_, store_.get()).dropped;
  (dropped_ ? Metrics().ps_dropped : Metrics().ps_applied)->Add({}, 1);
  EndPush();
  if (!early_) return WaitAndReply();
  bool finish;
  {
    absl::MutexLock lock(&mu_);
    push_done_ = true;
    finish = reply_done_;
  }
  if (finish) FinishOnce(grpc::Status::OK);
}

void PushPullReactor::WaitAndReply() {
  const int64_t wait_ms = std::clamp<int64_t>(header_.wait_ms(), 0, kMaxWaitMs);
  store_->WhenStepReaches(header_.min_step(), absl::Now() + absl::Milliseconds(wait_ms),
                          [this] { Reply(); });
}

void PushPullReactor::Reply() {
  v1::PushPullReply reply;
  v1::PushPullStatus* status = reply.mutable_status();
  if (rule_->consistent_pulls()) {
    int64_t step = 0;
    snapshot_ = store_->Snapshot(&step);
    status->set_global_step(step);
  } else {
    status->set_global_step(store_->global_step());
  }
  status->set_dropped(dropped_);
  status->set_incarnation(server_->incarnation());
  status->set_live_replicas(std::max(0, server_->live_replicas()));
  out_ = wire::EncodeField1(*status);
  StartWrite(&out_);
}

void PushPullReactor::OnWriteDone(bool ok) {
  out_.Clear();  // drops the sent block: an update may now write it in place
  if (!ok)
    return FinishOnce(
        grpc::Status(grpc::StatusCode::CANCELLED, "the client went away during the pull"));
  if (next_block_ < store_->blocks().size()) return WriteBlock();
  bool finish = true;
  if (early_) {  // the call ends once the push is applied too
    absl::MutexLock lock(&mu_);
    reply_done_ = true;
    finish = push_done_;
  }
  if (finish) FinishOnce(grpc::Status::OK);
}

void PushPullReactor::WriteBlock() {
  const size_t i = next_block_++;
  const ShardStore::BlockInfo& info = store_->blocks()[i];
  ShardStore::BlockRef block = snapshot_.empty() ? store_->Read(i) : std::move(snapshot_[i]);
  const float* data = block->values.get();
  out_ = wire::EncodeChunk(store_->shards()[info.shard].name, info.offset, data, info.size,
                           std::move(block));
  StartWrite(&out_);
}

void PushPullReactor::Fail(const grpc::Status& status) {
  if (push_ != nullptr) {  // a push begun and never applied: a client that died, or a bug
    Metrics().ps_refused->Add(
        {absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()))}, 1);
  }
  EndPush();
  FinishOnce(status);
}

void PushPullReactor::FinishOnce(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (admitting_) {  // Admitted() finishes: until then no read is outstanding to hold the call
      deferred_finish_ = status;
      return;
    }
    finished_ = true;
  }
  Finish(status);
}

void PushPullReactor::EndPush() {
  if (push_ == nullptr) return;
  push_.reset();  // releases gRPC's buffers
  store_->EndPush();
}

void PushPullReactor::OnDone() {
  EndPush();
  server_->Observe(Partitions::CallEvent::kEnded);
  delete this;
}

}  // namespace disttrain::trainer
