#include "trainer/setup.h"

#include "trainer/models/model_factory.h"

namespace disttrain::trainer {

absl::StatusOr<Setup> BuildSetup(const TrainerOptions& o, const std::string& split) {
  Setup s;
  if (o.model != "toy") {
    absl::StatusOr<Dataset> data = LoadFashionMnist(o.data_dir, split);
    if (!data.ok()) return data.status();
    s.data = *std::move(data);
  }
  std::vector<int> hidden;
  if (o.model == "mlp") {
    absl::StatusOr<std::vector<int>> h = ParseHiddenLayers(o.hidden);
    if (!h.ok()) return h.status();
    hidden = *std::move(h);
  }
  absl::StatusOr<std::unique_ptr<Model>> model =
      MakeModel(o.model, s.data.dim > 0 ? s.data.dim : 784, s.data.classes, hidden);
  if (!model.ok()) return model.status();
  s.model = *std::move(model);
  return s;
}

}  // namespace disttrain::trainer
