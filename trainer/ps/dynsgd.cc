// Dynamic SGD: asynchronous SGD whose commits are scaled by 1 / (staleness + 1), the staleness
// being how many global steps the server advanced since the values the worker computed on
// (the push's step). Fresh gradients count fully, late ones less.
#include <algorithm>

#include "trainer/kernels/parallel_for.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class DynSgd : public UpdateRule {
 public:
  explicit DynSgd(float lr) : lr_(lr) {}

  PushResult Apply(int64_t step, const Push& gradient, ShardStore* store) override {
    const int64_t staleness = std::max<int64_t>(0, store->global_step() - step);
    const float alpha = -lr_ / static_cast<float>(staleness + 1);
    kernels::ParallelFor(store->blocks().size(),
                         [&](size_t i) { Axpy(*store, i, alpha, gradient); });
    store->AdvanceStep();
    return {};
  }

 private:
  const float lr_;
};

}  // namespace

std::unique_ptr<UpdateRule> MakeDynSgd(float learning_rate) {
  return std::make_unique<DynSgd>(learning_rate);
}

}  // namespace disttrain::trainer
