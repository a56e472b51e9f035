// One complete push as the update rules read it: the pushed values of every block of the
// server's store (trainer/ps/shard_store.h).
//
// On the data path (ReceivedPush) the values stay in the gRPC buffers they arrived in until the
// push is complete, and a rule applies them from there: no copy into a gradient buffer first,
// and no such buffer (a ps serving 4 workers a 64 MiB model peaked at 2.41-2.47x the model
// instead of 2.49-2.50x, and push+pull gained 9-13% at 64-256 MiB;
// docs/notes/trainer-data-path.md). Tests and benchmarks give a push as whole vectors (DensePush).
#ifndef DISTTRAIN_TRAINER_PS_PUSH_H_
#define DISTTRAIN_TRAINER_PS_PUSH_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "trainer/ps/shard_receiver.h"
#include "trainer/ps/shard_store.h"
#include "trainer/wire/wire.h"

namespace disttrain::trainer {

class Push {
 public:
  virtual ~Push() = default;
  // fn(first, values, n): n pushed values for elements first..first+n-1 of the block, as raw
  // float32 bytes at any alignment (kernels::Axpy takes them so).
  using RunFn = ShardStore::RunFn;
  // Calls fn for consecutive runs that cover block `block` of `store` exactly, in order.
  virtual void ForEachRun(const ShardStore& store, size_t block, RunFn fn) const = 0;
  // The block's values copied to `out` (the block's size), for rules that need them contiguous.
  void CopyBlock(const ShardStore& store, size_t block, float* out) const;
};

// values = values + alpha * (the push's part of block `block` of `store`), read from where the
// push lies (no copy).
void Axpy(ShardStore& store, size_t block, float alpha, const Push& push);

// A push given as one vector per shard, by shard name, shaped like the store.
class DensePush : public Push {
 public:
  explicit DensePush(GradientMap values) : values_(std::move(values)) {}
  void ForEachRun(const ShardStore& store, size_t block, RunFn fn) const override;

 private:
  GradientMap values_;
};

// A push as PushPull receives it: chunks are checked as they arrive (ShardReceiver's rules and
// codes) and kept in gRPC's buffers. Thread-compatible: filled by one call, then read by the
// rule's threads.
class ReceivedPush : public Push {
 public:
  explicit ReceivedPush(const ShardStore& store);
  // A chunk of `shard` starting at element `offset`.
  grpc::Status Add(const std::string& shard, uint64_t offset, wire::ChunkData data);
  // OK when every shard is complete.
  grpc::Status Finish() const { return receiver_.Finish(); }
  void ForEachRun(const ShardStore& store, size_t block, RunFn fn) const override;

 private:
  struct Chunk {
    size_t offset;  // first element within the shard
    size_t size;    // elements
    wire::ChunkData data;
  };
  std::map<std::string, size_t> index_;     // shard name -> index in the store's shards()
  std::vector<std::vector<Chunk>> chunks_;  // by shard index, in order
  ShardReceiver receiver_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_PUSH_H_
