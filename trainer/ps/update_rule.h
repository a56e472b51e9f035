// How a parameter server turns pushed gradients into variable updates. One file per training
// scheme: async_sgd.cc (Hogwild-style, every push applied at once) and sync_sgd.cc
// (SyncReplicasOptimizer semantics). A new scheme is a new UpdateRule.
//
// The server calls Apply() for every complete push, from many threads at once: a rule writes the
// variables through the ShardStore (per-block copy-on-write) and guards its own state.
#ifndef DISTTRAIN_TRAINER_PS_UPDATE_RULE_H_
#define DISTTRAIN_TRAINER_PS_UPDATE_RULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/ps/shard_store.h"

namespace disttrain::trainer {

struct PushResult {
  bool dropped = false;  // stale: not applied
};

class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  // A complete push: the gradient of every shard `store` holds, computed at `step`.
  virtual PushResult Apply(int64_t step, const GradientMap& gradient, ShardStore* store) = 0;
  // True when a pull must see one step's values (synchronous training); otherwise each block is
  // read as it is when sent (Hogwild).
  virtual bool consistent_pulls() const { return false; }
};

struct UpdateRuleOptions {
  std::string mode = "async";  // "async" or "sync"
  float learning_rate = 0.01f;
  int replicas_to_aggregate = 1;  // sync: gradients averaged per step
};

absl::StatusOr<std::unique_ptr<UpdateRule>> MakeUpdateRule(const UpdateRuleOptions& options);

std::unique_ptr<UpdateRule> MakeAsyncSgd(float learning_rate);
std::unique_ptr<UpdateRule> MakeSyncSgd(float learning_rate, int replicas_to_aggregate);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_UPDATE_RULE_H_
