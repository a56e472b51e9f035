// Asynchronous SGD: every push is applied at once, theta <- theta - lr * g, and counts as one
// global step. The server half of hogwild, downpour-sgd and agn (whose workers push a window's
// summed or averaged gradients). Pushes run concurrently: each block is
// updated under its own lock only, so pushes never wait for each other's other blocks; one
// push's blocks are spread over the cores.
#include "trainer/kernels/parallel_for.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class AsyncSgd : public UpdateRule {
 public:
  explicit AsyncSgd(float lr) : lr_(lr) {}

  PushResult Apply(int64_t, const Push& gradient, ShardStore* store) override {
    kernels::ParallelFor(store->blocks().size(),
                         [&](size_t i) { Axpy(*store, i, -lr_, gradient); });
    store->AdvanceStep();
    return {};
  }

 private:
  const float lr_;
};

}  // namespace

std::unique_ptr<UpdateRule> MakeAsyncSgd(float learning_rate) {
  return std::make_unique<AsyncSgd>(learning_rate);
}

}  // namespace disttrain::trainer
