#include "trainer/worker/push_pull_call.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "trainer/wire/chunks.h"

namespace disttrain::trainer {

PushPullCall::PushPullCall(const v1::PushPullHeader& header,
                           const std::map<std::string, const Shard*>& shards, const Params* grads,
                           std::shared_ptr<const void> pin, Params* params)
    : shards_(shards),
      grads_(grads),
      pin_(std::move(pin)),
      params_(params),
      write_shard_(shards.begin()) {
  for (const auto& [name, s] : shards_) expected_ += s->size;
  out_ = wire::EncodeField1(header);
}

void PushPullCall::Start(grpc::GenericStub* stub, absl::Duration timeout) {
  ctx_.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  stub->PrepareBidiStreamingCall(&ctx_, kPushPullMethod, grpc::StubOptions(), this);
  StartRead(&in_);
  StartWrite(&out_);
  StartCall();
}

bool PushPullCall::NextWrite() {
  if (grads_ == nullptr) return false;
  while (write_shard_ != shards_.end() && write_offset_ >= write_shard_->second->size) {
    ++write_shard_;
    write_offset_ = 0;
  }
  if (write_shard_ == shards_.end()) return false;
  const Shard& s = *write_shard_->second;
  const size_t n = std::min(kChunkElements, s.size - write_offset_);
  out_ = wire::EncodeChunk(s.name, write_offset_,
                           (*grads_)[s.variable].data() + s.offset + write_offset_, n, pin_);
  write_offset_ += n;
  StartWrite(&out_);
  return true;
}

void PushPullCall::OnWriteDone(bool ok) {
  out_.Clear();     // drops the written chunk's reference to the gradient
  if (!ok) return;  // the call failed; OnDone reports why
  if (!NextWrite()) {
    pin_.reset();
    StartWritesDone();
  }
}

void PushPullCall::OnReadDone(bool ok) {
  if (!ok) return;
  if (!decoded_.Parse(in_)) return Abort(decoded_.error());
  if (!have_status_) {
    if (!decoded_.ParseField1(&status_)) return Abort("the reply did not start with a status");
    have_status_ = true;
    return StartRead(&in_);
  }
  if (!decoded_.is_chunk()) return Abort("expected chunks after the status");
  auto it = shards_.find(decoded_.shard());
  if (it == shards_.end())
    return Abort(absl::StrCat("the server sent unknown shard ", decoded_.shard()));
  const Shard& s = *it->second;
  const size_t bytes = decoded_.data_bytes();
  const size_t n = bytes / sizeof(float);
  if (bytes % sizeof(float) != 0 || decoded_.offset() > s.size || n > s.size - decoded_.offset()) {
    return Abort(absl::StrCat("the server sent a chunk outside shard ", s.name));
  }
  decoded_.CopyData((*params_)[s.variable].data() + s.offset + decoded_.offset());
  received_ += n;
  StartRead(&in_);
}

void PushPullCall::Abort(std::string why) {
  error_ = std::move(why);
  ctx_.TryCancel();
}

void PushPullCall::OnDone(const grpc::Status& status) {
  pin_.reset();
  out_.Clear();
  if (!error_.empty()) {
    result_ = grpc::Status(grpc::StatusCode::INTERNAL, error_);
  } else if (status.ok() && (!have_status_ || received_ != expected_)) {
    result_ =
        grpc::Status(grpc::StatusCode::INTERNAL,
                     absl::StrCat("incomplete pull: ", received_, " of ", expected_, " elements"));
  } else {
    result_ = status;
  }
  done_.Notify();
}

absl::Status PushPullCall::Wait() {
  done_.WaitForNotification();
  if (result_.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(result_.error_code()), result_.error_message());
}

}  // namespace disttrain::trainer
