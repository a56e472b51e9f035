#include "trainer/ps/shard_receiver.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {

ShardReceiver::ShardReceiver(std::map<std::string, std::vector<float>>* targets)
    : targets_(targets) {}

grpc::Status ShardReceiver::Add(const v1::TensorChunk& chunk) {
  auto it = targets_->find(chunk.shard());
  if (it == targets_->end()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("unknown shard \"", chunk.shard(), "\""));
  }
  const std::string& data = chunk.data();
  if (data.empty() || data.size() % sizeof(float) != 0) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("chunk of ", chunk.shard(), " at ", chunk.offset(), " has ", data.size(),
                     " bytes: want a positive number of whole float32 values"));
  }
  std::vector<float>& target = it->second;
  const size_t n = data.size() / sizeof(float);
  if (chunk.offset() > target.size() || n > target.size() - chunk.offset()) {
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                        absl::StrCat("chunk of ", chunk.shard(), " at ", chunk.offset(), "+", n,
                                     " is outside the shard of ", target.size()));
  }
  size_t& received = received_[chunk.shard()];
  if (chunk.offset() < received) {
    return grpc::Status(
        grpc::StatusCode::ALREADY_EXISTS,
        absl::StrCat("chunk of ", chunk.shard(), " at ", chunk.offset(),
                     " repeats elements already received (next is ", received, ")"));
  }
  if (chunk.offset() > received) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("chunk of ", chunk.shard(), " at ", chunk.offset(), " leaves a gap: elements ",
                     received, "..", chunk.offset(), " are missing (chunks come in order)"));
  }
  std::memcpy(target.data() + chunk.offset(), data.data(), data.size());
  received += n;
  return grpc::Status::OK;
}

grpc::Status ShardReceiver::Finish() const {
  for (const auto& [name, values] : *targets_) {
    auto it = received_.find(name);
    const size_t got = it == received_.end() ? 0 : it->second;
    if (got != values.size()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("the stream ended with shard ", name, " incomplete: ", got,
                                       " of ", values.size(), " elements; nothing was applied"));
    }
  }
  return grpc::Status::OK;
}

}  // namespace disttrain::trainer
