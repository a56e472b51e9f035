// Synchronous SGD with TensorFlow SyncReplicasOptimizer semantics: gradients are tagged with the
// step they were computed at; those for an older step are dropped as stale; once
// `replicas_to_aggregate` gradients of the current step arrived, their average is applied and
// the global step advances. Workers beyond replicas_to_aggregate are backups: the slowest
// gradients of each step are the ones dropped.
#include "trainer/kernels/axpy.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class SyncSgd : public UpdateRule {
 public:
  SyncSgd(float lr, int k) : lr_(lr), k_(k) {}

  PushResult Push(int64_t step, const std::map<std::string, std::vector<float>>& gradient,
                  ShardTable* table) override {
    if (step != table->global_step) return {true};
    for (const auto& [name, g] : gradient) {
      std::vector<float>& acc = sum_[name];
      if (acc.empty()) acc.assign(g.size(), 0.0f);
      kernels::Axpy(1.0f, g, acc);
    }
    if (++count_ < k_) return {};
    for (auto& [name, acc] : sum_) kernels::Axpy(-lr_ / k_, acc, table->values[name]);
    Reset();
    ++table->global_step;
    return {};
  }

  void Reset() override {
    sum_.clear();
    count_ = 0;
  }

 private:
  const float lr_;
  const int k_;
  std::map<std::string, std::vector<float>> sum_;
  int count_ = 0;
};

}  // namespace

std::unique_ptr<UpdateRule> MakeSyncSgd(float learning_rate, int replicas_to_aggregate) {
  return std::make_unique<SyncSgd>(learning_rate, replicas_to_aggregate);
}

absl::StatusOr<std::unique_ptr<UpdateRule>> MakeUpdateRule(const UpdateRuleOptions& o) {
  if (o.mode == "async") return MakeAsyncSgd(o.learning_rate);
  if (o.mode == "sync") {
    if (o.replicas_to_aggregate < 1) return absl::InvalidArgumentError("--replicas-to-aggregate must be >= 1");
    return MakeSyncSgd(o.learning_rate, o.replicas_to_aggregate);
  }
  return absl::InvalidArgumentError("--mode must be sync or async, got \"" + o.mode + "\"");
}

}  // namespace disttrain::trainer
