// How a parameter server turns what workers push into variable updates: the server half of a
// training scheme (trainer/schemes/scheme.h). One file per rule: async_sgd.cc (every push applied
// at once: hogwild, downpour-sgd, agn), adagrad.cc (downpour), sync_sgd.cc (sync, sagn),
// dynsgd.cc (staleness-scaled), easgd.cc (aeasgd, aeamsgd); update_rule.cc picks one.
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
#include "trainer/ps/push.h"
#include "trainer/ps/shard_store.h"
#include "trainer/schemes/scheme.h"

namespace disttrain::trainer {

struct PushResult {
  bool dropped = false;  // stale: not applied
};

class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  // A complete push: the gradient of every shard `store` holds, computed at `step`.
  virtual PushResult Apply(int64_t step, const Push& gradient, ShardStore* store) = 0;
  // True when a pull must see one step's values (synchronous training); otherwise each block is
  // read as it is when sent (Hogwild).
  virtual bool consistent_pulls() const { return false; }
  // The server's live training replicas changed (trainer/ps/membership.h): synchronous rules
  // aggregate accordingly, and apply a step that already has enough gradients. `store` may be
  // null (not initialised yet).
  virtual void SetLiveReplicas(int live, ShardStore* store) {}
  // The gradients the next synchronous step averages (0: the rule does not aggregate).
  virtual int quorum() const { return 0; }
};

// The server rule of `config`'s scheme.
std::unique_ptr<UpdateRule> MakeUpdateRule(const SchemeConfig& config);

// theta <- theta - lr * push.
std::unique_ptr<UpdateRule> MakeAsyncSgd(float learning_rate);
// acc <- acc + push^2; theta <- theta - lr * push / sqrt(acc), acc starting at `initial`.
std::unique_ptr<UpdateRule> MakeAdagrad(float learning_rate, float initial_accumulator);
// The average of `replicas_to_aggregate` pushes of the current step, applied as one step. After
// SetLiveReplicas(n): Quorum(n, replicas_to_aggregate, every_replica) pushes.
std::unique_ptr<UpdateRule> MakeSyncSgd(float learning_rate, int replicas_to_aggregate,
                                        bool every_replica = false);
// theta <- theta - lr / (staleness + 1) * push, staleness = global step - the push's step.
std::unique_ptr<UpdateRule> MakeDynSgd(float learning_rate);
// theta <- theta + push (the push is the elastic difference alpha * (x_worker - theta)).
std::unique_ptr<UpdateRule> MakeEasgd();

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_UPDATE_RULE_H_
