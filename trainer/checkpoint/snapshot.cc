#include "trainer/checkpoint/snapshot.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "trainer/wire/chunks.h"

namespace disttrain::trainer {

bool WriteSnapshotParts(const Checkpoint& s,
                        const std::function<bool(const v1::SnapshotPart&)>& emit) {
  v1::SnapshotPart part;
  v1::SnapshotHeader* header = part.mutable_header();
  header->set_global_step(s.global_step);
  header->set_final(s.final);
  for (const VariableSpec& v : s.variables) {
    v1::ShardSpec* spec = header->add_variables();
    spec->set_shard(v.name);
    spec->set_size(v.size);
  }
  if (!emit(part)) return false;
  for (size_t v = 0; v < s.variables.size(); ++v) {
    const std::vector<float>& values = s.values[v];
    for (size_t offset = 0; offset < values.size(); offset += kChunkElements) {
      const size_t n = std::min(kChunkElements, values.size() - offset);
      v1::SnapshotPart chunk;
      chunk.mutable_chunk()->set_shard(s.variables[v].name);
      chunk.mutable_chunk()->set_offset(offset);
      chunk.mutable_chunk()->set_data(reinterpret_cast<const char*>(values.data() + offset),
                                      n * sizeof(float));
      if (!emit(chunk)) return false;
    }
  }
  return true;
}

absl::Status SnapshotReader::Add(const v1::SnapshotPart& part) {
  if (part.has_header()) {
    if (has_header_) return absl::InvalidArgumentError("a snapshot has one header");
    has_header_ = true;
    snapshot_.global_step = part.header().global_step();
    snapshot_.final = part.header().final();
    for (const v1::ShardSpec& v : part.header().variables()) {
      snapshot_.variables.push_back({v.shard(), static_cast<size_t>(v.size())});
      snapshot_.values.emplace_back(v.size());
    }
    return absl::OkStatus();
  }
  if (!has_header_) return absl::InvalidArgumentError("a snapshot starts with its header");
  while (variable_ < snapshot_.variables.size() && filled_ == snapshot_.variables[variable_].size) {
    ++variable_;
    filled_ = 0;
  }
  const v1::TensorChunk& c = part.chunk();
  if (variable_ == snapshot_.variables.size())
    return absl::InvalidArgumentError("snapshot chunk past the last variable");
  const VariableSpec& v = snapshot_.variables[variable_];
  const size_t n = c.data().size() / sizeof(float);
  if (c.shard() != v.name || c.offset() != filled_ || c.data().size() % sizeof(float) != 0 ||
      n == 0 || filled_ + n > v.size) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot chunk out of order: ", c.shard(), "@",
                                                   c.offset(), " where ", v.name, "@", filled_,
                                                   " was expected"));
  }
  std::memcpy(snapshot_.values[variable_].data() + filled_, c.data().data(), c.data().size());
  filled_ += n;
  return absl::OkStatus();
}

absl::StatusOr<Checkpoint> SnapshotReader::Finish() {
  if (!has_header_) return absl::InvalidArgumentError("empty snapshot");
  size_t complete = variable_;
  if (complete < snapshot_.variables.size() && filled_ == snapshot_.variables[complete].size)
    ++complete;
  while (complete < snapshot_.variables.size() && snapshot_.variables[complete].size == 0)
    ++complete;
  if (complete != snapshot_.variables.size())
    return absl::InvalidArgumentError("snapshot ended before its last element");
  snapshot_.path = absl::StrCat("snapshot@", snapshot_.global_step);
  return std::move(snapshot_);
}

void SnapshotSlot::Put(std::shared_ptr<const Checkpoint> snapshot) {
  absl::MutexLock lock(&mu_);
  if (newest_ == nullptr || snapshot->global_step >= newest_->global_step ||
      snapshot->global_step == 0) {
    newest_ = std::move(snapshot);  // step 0 or lower: a new job restarted from scratch
  }
}

std::shared_ptr<const Checkpoint> SnapshotSlot::WaitNewer(int64_t after_step, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return closed_ || (newest_ != nullptr && newest_->global_step > after_step);
  };
  ++waiting_;
  mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
  --waiting_;
  if (closed_ || newest_ == nullptr || newest_->global_step <= after_step) return nullptr;
  return newest_;
}

int SnapshotSlot::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

void SnapshotSlot::Delivered(int64_t step) {
  absl::MutexLock lock(&mu_);
  delivered_step_ = std::max(delivered_step_, step);
}

void SnapshotSlot::Asked() {
  absl::MutexLock lock(&mu_);
  asked_ = true;
}

bool SnapshotSlot::asked() const {
  absl::MutexLock lock(&mu_);
  return asked_;
}

SnapshotSlot::FinalState SnapshotSlot::AwaitFinalDelivered(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  if (newest_ == nullptr || !newest_->final) return FinalState::kNone;
  auto delivered = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return closed_ || delivered_step_ >= newest_->global_step;
  };
  mu_.AwaitWithDeadline(absl::Condition(&delivered), deadline);
  return delivered_step_ >= newest_->global_step ? FinalState::kDelivered : FinalState::kNotFetched;
}

void SnapshotSlot::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

absl::Status PublishSnapshot(v1::ParameterServer::StubInterface* stub, const Checkpoint& s) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::PutSnapshotResponse response;
  std::unique_ptr<grpc::ClientWriterInterface<v1::SnapshotPart>> writer =
      stub->PutSnapshot(&ctx, &response);
  WriteSnapshotParts(s, [&](const v1::SnapshotPart& p) { return writer->Write(p); });
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok())
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("publish snapshot: ", status.error_message()));
  return absl::OkStatus();
}

absl::StatusOr<Checkpoint> FetchSnapshot(v1::ParameterServer::StubInterface* stub,
                                         int64_t after_step, absl::Duration wait) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   absl::ToChronoMilliseconds(wait + absl::Seconds(30)));
  v1::GetSnapshotRequest request;
  request.set_after_step(after_step);
  request.set_wait_ms(absl::ToInt64Milliseconds(wait));
  std::unique_ptr<grpc::ClientReaderInterface<v1::SnapshotPart>> reader =
      stub->GetSnapshot(&ctx, request);
  SnapshotReader assembled;
  v1::SnapshotPart part;
  absl::Status bad;
  while (reader->Read(&part)) {
    if (bad.ok()) bad = assembled.Add(part);
  }
  grpc::Status status = reader->Finish();
  if (!status.ok())
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("fetch snapshot: ", status.error_message()));
  if (!bad.ok()) return bad;
  return assembled.Finish();
}

}  // namespace disttrain::trainer
