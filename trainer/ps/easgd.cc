// The server half of asynchronous elastic averaging (EASGD, EAMSGD): a worker pushes the elastic
// difference E = alpha * (x_worker - theta) and the center variable moves towards it,
// theta <- theta + E. Each push is one global step; pushes apply concurrently, block by block.
#include "trainer/kernels/parallel_for.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

class Easgd : public UpdateRule {
 public:
  PushResult Apply(int64_t, const Push& difference, ShardStore* store) override {
    kernels::ParallelFor(store->blocks().size(),
                         [&](size_t i) { Axpy(*store, i, 1.0f, difference); });
    store->AdvanceStep();
    return {};
  }
};

}  // namespace

std::unique_ptr<UpdateRule> MakeEasgd() { return std::make_unique<Easgd>(); }

}  // namespace disttrain::trainer
