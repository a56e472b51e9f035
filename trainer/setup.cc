#include "trainer/setup.h"

namespace disttrain::trainer {

absl::StatusOr<Setup> BuildSetup(const TrainerOptions& o, const std::string& split) {
  Setup s;
  if (o.model != "toy") {
    absl::StatusOr<Dataset> data = LoadFashionMnist(o.data_dir, split);
    if (!data.ok()) return data.status();
    s.data = *std::move(data);
  }
  absl::StatusOr<std::unique_ptr<Model>> model = MakeModel(
      o.model, s.data.dim > 0 ? s.data.dim : 784, s.data.classes, static_cast<int>(o.hidden));
  if (!model.ok()) return model.status();
  s.model = *std::move(model);
  return s;
}

}  // namespace disttrain::trainer
