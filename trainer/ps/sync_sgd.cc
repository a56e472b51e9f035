// Synchronous SGD with TensorFlow SyncReplicasOptimizer semantics: gradients are tagged with the
// step they were computed at; those for an older step are dropped as stale; once
// `replicas_to_aggregate` gradients of the current step arrived, their average is applied and
// the global step advances. Workers beyond replicas_to_aggregate are backups: the slowest
// gradients of each step are the ones dropped. As workers join and leave a running job
// (SetLiveReplicas), the step needs one gradient per live replica (or replicas_to_aggregate, if
// fewer and set); a step that has enough when a replica leaves is applied then. Servers decide
// on their own, so for a moment one may close a step another still waits on: a gradient of a
// later step closes it there too (with the gradients it has), and the steps meet again.
#include "absl/synchronization/mutex.h"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/parallel_for.h"
#include "trainer/ps/membership.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

// How far a gradient's step may lie ahead of this server's for it to close the steps between
// (see Apply); a gradient further ahead is dropped.
constexpr int64_t kMaxCatchUp = 100;

class SyncSgd : public UpdateRule {
 public:
  SyncSgd(float lr, int k, bool every_replica)
      : lr_(lr), configured_(k), every_replica_(every_replica), k_(k) {}

  bool consistent_pulls() const override { return true; }

  void SetLiveReplicas(int live, ShardStore* store) override {
    absl::MutexLock lock(&mu_);
    k_ = Quorum(live, configured_, every_replica_);
    if (store != nullptr && store == store_ && count_ > 0 && count_ >= k_) ApplyStep(store);
  }

  int quorum() const override {
    absl::MutexLock lock(&mu_);
    return k_;
  }

  PushResult Apply(int64_t step, const Push& gradient, ShardStore* store) override {
    absl::MutexLock lock(&mu_);
    if (store != store_) {  // re-initialised: partial aggregates belong to the old variables
      sum_.clear();
      count_ = 0;
      store_ = store;
    }
    if (step < store->global_step()) return {true};  // stale
    if (step > store->global_step() + kMaxCatchUp) return {true};
    // A gradient of a later step: another server already applied the step this one still
    // collects (their live replicas differed for a moment, e.g. one had not yet seen a replica
    // leave). Close it with the gradients it has, so the servers' steps meet again. A gradient of
    // the closed step still in flight to this server (a pull elsewhere that gave up waiting) then
    // arrives stale and is dropped: fewer gradients in that step here, never a hang.
    while (step > store->global_step()) {
      if (count_ > 0) {
        ApplyStep(store);
      } else {
        ShardStore::WholeStep skip(store);
      }
    }
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
    if (++count_ >= k_) ApplyStep(store);
    return {};
  }

 private:
  // The average of the count_ gradients summed, as one step.
  void ApplyStep(ShardStore* store) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ShardStore::WholeStep whole(store);
    const std::vector<const float*> acc = BlockSources(sum_, *store);
    const float rate = -lr_ / static_cast<float>(count_);
    kernels::ParallelFor(acc.size(), [&](size_t i) { store->Axpy(i, rate, acc[i]); });
    count_ = 0;
  }

  const float lr_;
  const int configured_;
  const bool every_replica_;
  mutable absl::Mutex mu_;
  int k_ ABSL_GUARDED_BY(mu_);
  const ShardStore* store_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, std::vector<float>> sum_ ABSL_GUARDED_BY(mu_);
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

std::unique_ptr<UpdateRule> MakeSyncSgd(float learning_rate, int replicas_to_aggregate,
                                        bool every_replica) {
  return std::make_unique<SyncSgd>(learning_rate, replicas_to_aggregate, every_replica);
}

}  // namespace disttrain::trainer
