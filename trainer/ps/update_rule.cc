#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {

std::unique_ptr<UpdateRule> MakeUpdateRule(const SchemeConfig& c) {
  switch (c.scheme) {
    case Scheme::kDownpour:
      return MakeAdagrad(c.learning_rate, c.adagrad_initial_accumulator);
    case Scheme::kSync:
    case Scheme::kSagn:
      return MakeSyncSgd(c.learning_rate, c.replicas_to_aggregate, c.aggregate_every_replica);
    case Scheme::kDynSgd:
      return MakeDynSgd(c.learning_rate);
    case Scheme::kAeasgd:
    case Scheme::kAeamsgd:
      return MakeEasgd();
    case Scheme::kHogwild:
    case Scheme::kDownpourSgd:
    case Scheme::kAgn:
      break;
  }
  return MakeAsyncSgd(c.learning_rate);
}

}  // namespace disttrain::trainer
