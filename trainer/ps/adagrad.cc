// Adagrad on the servers (DOWNPOUR's global optimiser): per element, acc += g^2 and
// theta -= lr * g / sqrt(acc). Pushes apply concurrently, each block under its own lock, and the
// block's accumulators are updated under that same lock, so they never race.
#include <vector>

#include "absl/synchronization/mutex.h"
#include "trainer/kernels/parallel_for.h"
#include "trainer/kernels/update_kernels.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class Adagrad : public UpdateRule {
 public:
  Adagrad(float lr, float initial) : lr_(lr), initial_(initial) {}

  PushResult Apply(int64_t, const Push& gradient, ShardStore* store) override {
    std::shared_ptr<Accumulators> acc = AccumulatorsOf(store);
    kernels::ParallelFor(store->blocks().size(), [&](size_t i) {
      float* a = (*acc)[i].data();
      // The block's gradient, contiguous, in a buffer each thread reuses (cache-warm).
      thread_local std::vector<float> block;
      block.resize(store->blocks()[i].size);
      gradient.CopyBlock(*store, i, block.data());
      const float* gi = block.data();
      store->Update(i, [&](const float* in, float* out, size_t n) {
        kernels::AdagradTo(lr_, {gi, n}, {a, n}, {in, n}, {out, n});
      });
    });
    store->AdvanceStep();
    return {};
  }

 private:
  using Accumulators = std::vector<std::vector<float>>;  // by block

  // The accumulators of `store`'s variables; fresh ones when the variables were re-initialised.
  std::shared_ptr<Accumulators> AccumulatorsOf(const ShardStore* store) {
    absl::MutexLock lock(&mu_);
    if (store != store_) {
      acc_ = std::make_shared<Accumulators>();
      for (const ShardStore::BlockInfo& b : store->blocks()) acc_->emplace_back(b.size, initial_);
      store_ = store;
    }
    return acc_;
  }

  const float lr_;
  const float initial_;
  absl::Mutex mu_;
  const ShardStore* store_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::shared_ptr<Accumulators> acc_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<UpdateRule> MakeAdagrad(float learning_rate, float initial_accumulator) {
  return std::make_unique<Adagrad>(learning_rate, initial_accumulator);
}

}  // namespace disttrain::trainer
