// How a parameter server turns pushed gradients into variable updates. One file per training
// scheme: async_sgd.cc (Hogwild-style, every push applied at once) and sync_sgd.cc
// (SyncReplicasOptimizer semantics). A new scheme is a new UpdateRule.
//
// The server calls Push() with its lock held; rules need no locking of their own.
#ifndef DISTTRAIN_TRAINER_PS_UPDATE_RULE_H_
#define DISTTRAIN_TRAINER_PS_UPDATE_RULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace disttrain::trainer {

// The variables one server holds, by shard name, and its global step.
struct ShardTable {
  std::map<std::string, std::vector<float>> values;
  int64_t global_step = 0;
};

struct PushResult {
  bool dropped = false;  // stale: not applied
};

class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  // A complete push: the gradient of every shard this server holds, computed at `step`.
  virtual PushResult Push(int64_t step, const std::map<std::string, std::vector<float>>& gradient,
                          ShardTable* table) = 0;
  // Forgets partial aggregates (after the table is re-initialised from a checkpoint).
  virtual void Reset() {}
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
