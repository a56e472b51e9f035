#include "trainer/ps/shard_store.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "trainer/kernels/axpy.h"

namespace disttrain::trainer {
namespace {

// Whether nobody but the store holds `block`, so it may be updated in place. A former holder's
// last reads of the values happen before its shared_ptr release (a release operation on the
// count use_count() reads relaxed); the acquire fence orders them before the caller's writes.
// ThreadSanitizer models no fence: under it the in-place paths are named in scripts/tsan.supp.
bool Exclusive(const std::shared_ptr<ShardStore::Block>& block) {
  if (block.use_count() != 1) return false;
#if !defined(__SANITIZE_THREAD__)
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
  return true;
}

}  // namespace

ShardStore::ShardStore(std::map<std::string, std::vector<float>> values, int64_t global_step,
                       int push_buffers)
    : step_(global_step), pushes_left_(std::max(1, push_buffers)) {
  for (const auto& [name, v] : values) {
    ShardInfo s{name, v.size(), blocks_.size(), 0};
    for (size_t off = 0; off < v.size(); off += kChunkElements) {
      blocks_.push_back({shards_.size(), off, std::min(kChunkElements, v.size() - off)});
      ++s.num_blocks;
    }
    total_ += v.size();
    shards_.push_back(std::move(s));
  }
  slots_ = std::make_unique<Slot[]>(blocks_.size());
  for (const ShardInfo& s : shards_) {
    std::vector<float> v =
        std::move(values.at(s.name));  // freed shard by shard: peak S + one shard
    for (size_t i = s.first_block; i < s.first_block + s.num_blocks; ++i) {
      auto block = std::make_shared<Block>(blocks_[i].size);
      std::memcpy(block->values.get(), v.data() + blocks_[i].offset,
                  blocks_[i].size * sizeof(float));
      absl::MutexLock lock(&slots_[i].mu);
      slots_[i].block = std::move(block);
    }
  }
}

ShardStore::~ShardStore() { Close(); }

ShardStore::BlockRef ShardStore::Read(size_t block) const {
  absl::MutexLock lock(&slots_[block].mu);
  return slots_[block].block;
}

std::vector<ShardStore::BlockRef> ShardStore::Snapshot(int64_t* global_step) const {
  absl::ReaderMutexLock version(&version_mu_);
  std::vector<BlockRef> out;
  out.reserve(blocks_.size());
  for (size_t i = 0; i < blocks_.size(); ++i) out.push_back(Read(i));
  *global_step = this->global_step();
  return out;
}

void ShardStore::Axpy(size_t block, float alpha, const float* x) {
  Slot& slot = slots_[block];
  absl::MutexLock lock(&slot.mu);
  const size_t n = slot.block->size;
  if (Exclusive(slot.block)) {  // nobody is sending it: update in place
    kernels::Axpy(alpha, {x, n}, {slot.block->values.get(), n});
    return;
  }
  auto fresh = std::make_shared<Block>(n);
  kernels::AxpyTo(alpha, {x, n}, {slot.block->values.get(), n}, {fresh->values.get(), n});
  slot.block = std::move(fresh);
}

void ShardStore::Axpy(size_t block, float alpha, Runs x) {
  Slot& slot = slots_[block];
  absl::MutexLock lock(&slot.mu);
  const size_t n = slot.block->size;
  float* values = slot.block->values.get();
  if (Exclusive(slot.block)) {
    x([&](size_t first, const std::byte* run, size_t k) {
      kernels::Axpy(alpha, run, {values + first, k});
    });
    return;
  }
  auto fresh = std::make_shared<Block>(n);
  float* out = fresh->values.get();
  x([&](size_t first, const std::byte* run, size_t k) {
    kernels::AxpyTo(alpha, run, {values + first, k}, {out + first, k});
  });
  slot.block = std::move(fresh);
}

void ShardStore::Update(size_t block, const BlockUpdate& fn) {
  Slot& slot = slots_[block];
  absl::MutexLock lock(&slot.mu);
  const size_t n = slot.block->size;
  if (Exclusive(slot.block)) {
    fn(slot.block->values.get(), slot.block->values.get(), n);
    return;
  }
  auto fresh = std::make_shared<Block>(n);
  fn(slot.block->values.get(), fresh->values.get(), n);
  slot.block = std::move(fresh);
}

int64_t ShardStore::global_step() const {
  absl::MutexLock lock(&step_mu_);
  return step_;
}

std::vector<std::function<void()>> ShardStore::IncrementStep() {
  std::vector<std::function<void()>> ready;
  absl::MutexLock lock(&step_mu_);
  const int64_t step = ++step_;
  auto satisfied = [step](const Waiter& w) { return w.min_step <= step; };
  for (Waiter& w : waiters_) {
    if (satisfied(w)) ready.push_back(std::move(w.fn));
  }
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(), satisfied), waiters_.end());
  return ready;
}

void ShardStore::AdvanceStep() {
  for (auto& fn : IncrementStep()) fn();
}

ShardStore::WholeStep::WholeStep(ShardStore* store) : store_(store) {
  store_->version_mu_.WriterLock();
}

ShardStore::WholeStep::~WholeStep() {
  std::vector<std::function<void()>> ready = store_->IncrementStep();
  store_->version_mu_.WriterUnlock();
  for (auto& fn : ready) fn();
}

void ShardStore::WhenStepReaches(int64_t min_step, absl::Time deadline, std::function<void()> fn) {
  {
    absl::MutexLock lock(&step_mu_);
    if (!closed_ && step_ < min_step && deadline > absl::Now()) {
      waiters_.push_back({min_step, deadline, std::move(fn)});
      return;
    }
  }
  fn();
}

int ShardStore::waiting_pulls() const {
  absl::MutexLock lock(&step_mu_);
  return static_cast<int>(waiters_.size());
}

void ShardStore::ExpireWaiters(absl::Time now) {
  std::vector<std::function<void()>> ready;
  {
    absl::MutexLock lock(&step_mu_);
    auto expired = [now](const Waiter& w) { return w.deadline <= now; };
    for (Waiter& w : waiters_) {
      if (expired(w)) ready.push_back(std::move(w.fn));
    }
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(), expired), waiters_.end());
  }
  for (auto& fn : ready) fn();
}

void ShardStore::Close() {
  std::vector<Waiter> all;
  {
    absl::MutexLock lock(&step_mu_);
    closed_ = true;
    all.swap(waiters_);
  }
  for (Waiter& w : all) w.fn();
}

void ShardStore::AdmitPush(std::function<void()> fn) {
  {
    absl::MutexLock lock(&push_mu_);
    if (pushes_left_ == 0) {
      queue_.push_back(std::move(fn));
      return;
    }
    --pushes_left_;
  }
  fn();
}

void ShardStore::EndPush() {
  std::function<void()> next;
  {
    absl::MutexLock lock(&push_mu_);
    if (queue_.empty()) {
      ++pushes_left_;
      return;
    }
    next = std::move(queue_.front());
    queue_.pop_front();
  }
  next();  // the ended push's place goes to the first one waiting
}

std::vector<const float*> BlockSources(const GradientMap& values, const ShardStore& store) {
  std::vector<const float*> out;
  out.reserve(store.blocks().size());
  for (const ShardStore::BlockInfo& b : store.blocks()) {
    out.push_back(values.at(store.shards()[b.shard].name).data() + b.offset);
  }
  return out;
}

}  // namespace disttrain::trainer
