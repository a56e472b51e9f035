// Asynchronous SGD (Hogwild / DOWNPOUR with a window of 1): every push is applied at once,
// theta <- theta - lr * g, and counts as one global step.
#include "trainer/kernels/axpy.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class AsyncSgd : public UpdateRule {
 public:
  explicit AsyncSgd(float lr) : lr_(lr) {}
  PushResult Push(int64_t, const std::map<std::string, std::vector<float>>& gradient, ShardTable* table) override {
    for (const auto& [name, g] : gradient) kernels::Axpy(-lr_, g, table->values[name]);
    ++table->global_step;
    return {};
  }

 private:
  const float lr_;
};

}  // namespace

std::unique_ptr<UpdateRule> MakeAsyncSgd(float learning_rate) { return std::make_unique<AsyncSgd>(learning_rate); }

}  // namespace disttrain::trainer
