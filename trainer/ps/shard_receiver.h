// Assembles the chunks of one Init or Push stream into whole shards. A stream is accepted only
// when every element of every expected shard arrived exactly once: chunks of a shard come in
// order (offset = elements received so far), never past its end, whole float32 values only.
// Anything else is refused with a precise gRPC code and the caller applies nothing:
//   NOT_FOUND         a chunk names a shard this server does not expect
//   INVALID_ARGUMENT  a chunk that is empty, not whole float32 values, or leaves a gap
//   ALREADY_EXISTS    a chunk repeats elements already received (duplicate)
//   OUT_OF_RANGE      a chunk runs past the end of its shard
//   CANCELLED         the client cancelled the stream (checked by the caller)
//   INVALID_ARGUMENT  the stream ended normally with a shard incomplete (Finish)
// Either copies each chunk into a buffer per shard (Init) or only checks it (a push, whose
// chunks are kept where they arrived: trainer/ps/push.h). Thread-compatible: one stream's
// handler uses it.
#ifndef DISTTRAIN_TRAINER_PS_SHARD_RECEIVER_H_
#define DISTTRAIN_TRAINER_PS_SHARD_RECEIVER_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "disttrain/trainer/v1/parameter_server.pb.h"

namespace disttrain::trainer {

class ShardReceiver {
 public:
  // `targets` maps each expected shard to a buffer already sized to the shard; chunks are
  // copied into it. It must outlive the receiver.
  explicit ShardReceiver(std::map<std::string, std::vector<float>>* targets);
  // Checks chunks only: `sizes` maps each expected shard to its size in elements.
  explicit ShardReceiver(std::map<std::string, size_t> sizes);

  grpc::Status Add(const v1::TensorChunk& chunk);
  // A chunk of `bytes` bytes at element `offset` of `shard`; `copy(dst)` copies its data.
  grpc::Status Add(const std::string& shard, uint64_t offset, size_t bytes,
                   const std::function<void(void*)>& copy);
  // Checks a chunk and counts it as received (no copy).
  grpc::Status Accept(const std::string& shard, uint64_t offset, size_t bytes);
  // OK when every shard is complete.
  grpc::Status Finish() const;

 private:
  std::map<std::string, std::vector<float>>* targets_ = nullptr;
  std::map<std::string, size_t> sizes_;     // expected elements, by shard
  std::map<std::string, size_t> received_;  // elements so far, by shard
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_SHARD_RECEIVER_H_
