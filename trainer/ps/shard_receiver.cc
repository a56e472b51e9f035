#include "trainer/ps/shard_receiver.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {

ShardReceiver::ShardReceiver(std::map<std::string, std::vector<float>>* targets)
    : targets_(targets) {
  for (const auto& [name, values] : *targets_) sizes_[name] = values.size();
}

ShardReceiver::ShardReceiver(std::map<std::string, size_t> sizes) : sizes_(std::move(sizes)) {}

grpc::Status ShardReceiver::Add(const v1::TensorChunk& chunk) {
  return Add(chunk.shard(), chunk.offset(), chunk.data().size(),
             [&chunk](void* dst) { std::memcpy(dst, chunk.data().data(), chunk.data().size()); });
}

grpc::Status ShardReceiver::Add(const std::string& shard, uint64_t offset, size_t bytes,
                                const std::function<void(void*)>& copy) {
  if (grpc::Status s = Accept(shard, offset, bytes); !s.ok()) return s;
  if (targets_ != nullptr) copy(targets_->at(shard).data() + offset);
  return grpc::Status::OK;
}

grpc::Status ShardReceiver::Accept(const std::string& shard, uint64_t offset, size_t bytes) {
  auto it = sizes_.find(shard);
  if (it == sizes_.end()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("unknown shard \"", shard, "\""));
  }
  if (bytes == 0 || bytes % sizeof(float) != 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("chunk of ", shard, " at ", offset, " has ", bytes,
                                     " bytes: want a positive number of whole float32 values"));
  }
  const size_t size = it->second;
  const size_t n = bytes / sizeof(float);
  if (offset > size || n > size - offset) {
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                        absl::StrCat("chunk of ", shard, " at ", offset, "+", n,
                                     " is outside the shard of ", size));
  }
  size_t& received = received_[shard];
  if (offset < received) {
    return grpc::Status(
        grpc::StatusCode::ALREADY_EXISTS,
        absl::StrCat("chunk of ", shard, " at ", offset,
                     " repeats elements already received (next is ", received, ")"));
  }
  if (offset > received) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("chunk of ", shard, " at ", offset, " leaves a gap: elements ", received, "..",
                     offset, " are missing (chunks come in order)"));
  }
  received += n;
  return grpc::Status::OK;
}

grpc::Status ShardReceiver::Finish() const {
  for (const auto& [name, size] : sizes_) {
    auto it = received_.find(name);
    const size_t got = it == received_.end() ? 0 : it->second;
    if (got != size) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("the stream ended with shard ", name, " incomplete: ", got,
                                       " of ", size, " elements; nothing was applied"));
    }
  }
  return grpc::Status::OK;
}

}  // namespace disttrain::trainer
