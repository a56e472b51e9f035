#include "trainer/ps/push.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace disttrain::trainer {
namespace {

std::map<std::string, size_t> ShardSizes(const ShardStore& store) {
  std::map<std::string, size_t> sizes;
  for (const ShardStore::ShardInfo& s : store.shards()) sizes[s.name] = s.size;
  return sizes;
}

}  // namespace

void Axpy(ShardStore& store, size_t block, float alpha, const Push& push) {
  store.Axpy(block, alpha, [&](ShardStore::RunFn fn) { push.ForEachRun(store, block, fn); });
}

void Push::CopyBlock(const ShardStore& store, size_t block, float* out) const {
  ForEachRun(store, block, [out](size_t first, const std::byte* values, size_t n) {
    std::memcpy(out + first, values, n * sizeof(float));
  });
}

void DensePush::ForEachRun(const ShardStore& store, size_t block, RunFn fn) const {
  const ShardStore::BlockInfo& b = store.blocks()[block];
  const std::vector<float>& v = values_.at(store.shards()[b.shard].name);
  fn(0, reinterpret_cast<const std::byte*>(v.data() + b.offset), b.size);
}

ReceivedPush::ReceivedPush(const ShardStore& store)
    : chunks_(store.shards().size()), receiver_(ShardSizes(store)) {
  for (size_t i = 0; i < store.shards().size(); ++i) index_[store.shards()[i].name] = i;
}

grpc::Status ReceivedPush::Add(const std::string& shard, uint64_t offset, wire::ChunkData data) {
  if (grpc::Status s = receiver_.Accept(shard, offset, data.bytes()); !s.ok()) return s;
  chunks_[index_.at(shard)].push_back({offset, data.bytes() / sizeof(float), std::move(data)});
  return grpc::Status::OK;
}

void ReceivedPush::ForEachRun(const ShardStore& store, size_t block, RunFn fn) const {
  const ShardStore::BlockInfo& b = store.blocks()[block];
  const std::vector<Chunk>& chunks = chunks_[b.shard];
  const size_t begin = b.offset, end = b.offset + b.size;
  // The first chunk that ends after the block begins (chunks are contiguous and in order).
  auto it = std::upper_bound(chunks.begin(), chunks.end(), begin,
                             [](size_t at, const Chunk& c) { return at < c.offset + c.size; });
  size_t at = begin;
  for (; it != chunks.end() && it->offset < end; ++it) {
    const size_t lo = std::max(begin, it->offset), hi = std::min(end, it->offset + it->size);
    it->data.ForEachRun((lo - it->offset) * sizeof(float), (hi - it->offset) * sizeof(float),
                        [&](const std::byte* values, size_t n) {
                          fn(at - begin, values, n);
                          at += n;
                        });
  }
}

}  // namespace disttrain::trainer
