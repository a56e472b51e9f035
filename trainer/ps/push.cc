#include "trainer/ps/push.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "trainer/kernels/axpy.h"
#include "trainer/ps/apply_pool.h"

namespace disttrain::trainer {
namespace {

std::map<std::string, size_t> ShardSizes(const ShardStore& store) {
  std::map<std::string, size_t> sizes;
  for (const ShardStore::ShardInfo& s : store.shards()) sizes[s.name] = s.size;
  return sizes;
}

}  // namespace

void Push::CopyBlock(const ShardStore& store, size_t block, float* out) const {
  ForEachRun(store, block, [out](size_t first, const std::byte* values, size_t n) {
    std::memcpy(out + first, values, n * sizeof(float));
  });
}

void ApplyScaled(float alpha, const Push& push, ShardStore* store) {
  ParallelFor(store->blocks().size(), [&](size_t i) {
    if (std::shared_ptr<ShardStore::Block> updated = push.TakeUpdated(i)) {
      store->Replace(i, std::move(updated));
    } else {
      store->Axpy(i, alpha, push);
    }
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

void ReceivedPush::UpdateBlocksOnArrival(const ShardStore* store, float alpha) {
  update_store_ = store;
  alpha_ = alpha;
  updated_.resize(store->blocks().size());
}

std::shared_ptr<ShardStore::Block> ReceivedPush::TakeUpdated(size_t block) const {
  if (block >= updated_.size()) return nullptr;
  return std::move(updated_[block]);
}

grpc::Status ReceivedPush::Add(const std::string& shard, uint64_t offset, wire::ChunkData data) {
  if (grpc::Status s = receiver_.Accept(shard, offset, data.bytes()); !s.ok()) return s;
  if (update_store_ != nullptr && offset % kChunkElements == 0) {
    const ShardStore::ShardInfo& info = update_store_->shards()[index_.at(shard)];
    const size_t block = info.first_block + offset / kChunkElements;
    const size_t n = update_store_->blocks()[block].size;
    if (data.bytes() == n * sizeof(float)) {
      ShardStore::BlockRef current = update_store_->Read(block);
      auto fresh = std::make_shared<ShardStore::Block>(n);
      const float* in = current->values.get();
      float* out = fresh->values.get();
      size_t at = 0;
      data.ForEachRun(0, data.bytes(), [&](const std::byte* x, size_t k) {
        kernels::AxpyTo(alpha_, x, {in + at, k}, {out + at, k});
        at += k;
      });
      updated_[block] = std::move(fresh);
      return grpc::Status::OK;
    }
  }
  chunks_[index_.at(shard)].push_back({offset, data.bytes() / sizeof(float), std::move(data)});
  return grpc::Status::OK;
}

void ReceivedPush::ForEachRun(const ShardStore& store, size_t block, RunFn fn) const {
  const ShardStore::BlockInfo& b = store.blocks()[block];
  const std::vector<Chunk>& chunks = chunks_[b.shard];
  const size_t begin = b.offset, end = b.offset + b.size;
  // The first chunk that ends after the block begins (chunks are in order, and every chunk of a
  // block not updated on arrival was kept).
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
