// Synchronous SGD with TensorFlow SyncReplicasOptimizer semantics: gradients are tagged with the
// step they were computed at; those for an older step are dropped as stale; once
// `replicas_to_aggregate` gradients of the current step arrived, their average is applied and
// the global step advances. Workers beyond replicas_to_aggregate are backups: the slowest
// gradients of each step are the ones dropped.
#include "absl/synchronization/mutex.h"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/parallel_for.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class SyncSgd : public UpdateRule {
 public:
  SyncSgd(float lr, int k) : lr_(lr), k_(k) {}

  bool consistent_pulls() const override { return true; }

  PushResult Apply(int64_t step, const Push& gradient, ShardStore* store) override {
    absl::MutexLock lock(&mu_);
    if (store != store_) {  // re-initialised: partial aggregates belong to the old variables
      sum_.clear();
      count_ = 0;
      store_ = store;
    }
    if (step != store->global_step()) return {true};
    if (count_ == 0) {  // reuses the buffers of the previous step
      for (const ShardStore::ShardInfo& s : store->shards()) sum_[s.name].assign(s.size, 0.0f);
    }
    for (size_t i = 0; i < store->blocks().size(); ++i) {
      const ShardStore::BlockInfo& b = store->blocks()[i];
      float* acc = sum_[store->shards()[b.shard].name].data() + b.offset;
      gradient.ForEachRun(*store, i, [&](size_t first, const std::byte* g, size_t n) {
        kernels::Axpy(1.0f, g, {acc + first, n});
      });
    }
    if (++count_ < k_) return {};
    {
      ShardStore::WholeStep whole(store);
      const std::vector<const float*> acc = BlockSources(sum_, *store);
      kernels::ParallelFor(acc.size(), [&](size_t i) { store->Axpy(i, -lr_ / k_, acc[i]); });
      count_ = 0;
    }
    return {};
  }

 private:
  const float lr_;
  const int k_;
  absl::Mutex mu_;
  const ShardStore* store_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, std::vector<float>> sum_ ABSL_GUARDED_BY(mu_);
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

std::unique_ptr<UpdateRule> MakeSyncSgd(float learning_rate, int replicas_to_aggregate) {
  return std::make_unique<SyncSgd>(learning_rate, replicas_to_aggregate);
}

}  // namespace disttrain::trainer
