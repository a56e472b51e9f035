// The variables one parameter server holds, split into blocks of one wire chunk (512 KiB).
//
// Each block is a reference-counted buffer. A pull takes references and sends the blocks from
// where they lie; an update writes a block in place when no pull holds it and otherwise into a
// fresh buffer that replaces it (copy-on-write, fused with the update, so it costs no extra pass).
// Readers therefore never see a block change under them and never copy what they send, and
// updates of different blocks never wait for each other (Hogwild, without data races).
//
// Whole-step updates (synchronous training) hold the version lock exclusively; Snapshot() takes
// it shared, so a snapshot is one step's values. The store also admits pushes (how many are
// received at once: each is held whole until it is applied) and keeps the waiters of pulls that
// wait for a step. Thread-safe.
#ifndef DISTTRAIN_TRAINER_PS_SHARD_STORE_H_
#define DISTTRAIN_TRAINER_PS_SHARD_STORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "trainer/wire/chunks.h"

namespace disttrain::trainer {

// A gradient for every shard a server holds, by shard name.
using GradientMap = std::map<std::string, std::vector<float>>;

class ShardStore {
 public:
  struct Block {
    explicit Block(size_t n) : values(new float[n]), size(n) {}
    std::unique_ptr<float[]> values;
    size_t size;
  };
  using BlockRef = std::shared_ptr<const Block>;
  struct BlockInfo {
    size_t shard;   // index in shards()
    size_t offset;  // first element within the shard
    size_t size;
  };
  struct ShardInfo {
    std::string name;
    size_t size = 0;
    size_t first_block = 0, num_blocks = 0;
  };

  // `push_buffers`: how many pushes may be received at once (each is held whole, up to the size
  // of the server's variables, until it is applied).
  ShardStore(std::map<std::string, std::vector<float>> values, int64_t global_step,
             int push_buffers);
  ~ShardStore();

  const std::vector<ShardInfo>& shards() const { return shards_; }
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  size_t total_elements() const { return total_; }

  // The current version of one block.
  BlockRef Read(size_t block) const;
  // Every block of one step (waits for a whole-step update in progress).
  std::vector<BlockRef> Snapshot(int64_t* global_step) const;

  // values = values + alpha * x for one block (x has the block's size).
  void Axpy(size_t block, float alpha, const float* x);
  // fn(first, values, n): n values for elements first..first+n-1 of a block, as raw float32
  // bytes at any alignment (kernels::Axpy takes them so).
  using RunFn = absl::FunctionRef<void(size_t first, const std::byte* values, size_t n)>;
  // Calls its argument with runs covering one block exactly, in order (a push's part of it).
  using Runs = absl::FunctionRef<void(RunFn)>;
  // The same with x given as runs, read from where they lie (no copy; trainer/ps/push.h).
  void Axpy(size_t block, float alpha, Runs x);
  // Any element-wise update of one block: fn(in, out, n) writes the new values to `out` from the
  // current ones in `in` (the same buffer when nobody is sending the block). Runs under the
  // block's lock, so a rule may keep per-block state (e.g. Adagrad accumulators) updated in fn.
  using BlockUpdate = std::function<void(const float* in, float* out, size_t n)>;
  void Update(size_t block, const BlockUpdate& fn);
  // Held while a whole step is applied (synchronous training): Snapshot() never sees half of it,
  // and the step advances before the lock is released. Waiters run after.
  class WholeStep {
   public:
    explicit WholeStep(ShardStore* store);
    ~WholeStep();
    WholeStep(const WholeStep&) = delete;
    WholeStep& operator=(const WholeStep&) = delete;

   private:
    ShardStore* store_;
  };

  int64_t global_step() const;
  // global_step += 1 (Hogwild: after every block of a push was applied); runs the waiters it
  // satisfies.
  void AdvanceStep();
  // Runs `fn` once the step reaches `min_step`, or at `deadline`, or when the store closes,
  // whichever comes first (at once when already there). `fn` may run on another thread.
  void WhenStepReaches(int64_t min_step, absl::Time deadline, std::function<void()> fn);
  // Runs the waiters whose deadline passed.
  void ExpireWaiters(absl::Time now);
  // Pulls waiting for a step now (tests observe a pull that waits).
  int waiting_pulls() const;
  // Runs every waiter now (the store is being replaced or the server stops).
  void Close();

  // Runs `fn` once fewer than `push_buffers` pushes are being received (perhaps later, on
  // another thread). Every admitted push ends with EndPush, applied or not.
  void AdmitPush(std::function<void()> fn);
  void EndPush();

 private:
  struct Slot {
    mutable absl::Mutex mu;
    std::shared_ptr<Block> block ABSL_GUARDED_BY(mu);
  };
  struct Waiter {
    int64_t min_step;
    absl::Time deadline;
    std::function<void()> fn;
  };
  // Increments the step and takes the waiters it satisfies.
  std::vector<std::function<void()>> IncrementStep();

  std::vector<ShardInfo> shards_;
  std::vector<BlockInfo> blocks_;
  size_t total_ = 0;
  std::unique_ptr<Slot[]> slots_;
  mutable absl::Mutex version_mu_;

  mutable absl::Mutex step_mu_;
  int64_t step_ ABSL_GUARDED_BY(step_mu_);
  bool closed_ ABSL_GUARDED_BY(step_mu_) = false;
  std::vector<Waiter> waiters_ ABSL_GUARDED_BY(step_mu_);

  absl::Mutex push_mu_;
  int pushes_left_ ABSL_GUARDED_BY(push_mu_);  // more that may be received now
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(push_mu_);
};

// For every block of `store`, where its part of `values` (shaped like the store) starts.
std::vector<const float*> BlockSources(const GradientMap& values, const ShardStore& store);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_SHARD_STORE_H_
