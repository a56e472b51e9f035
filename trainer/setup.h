// What every training role builds from the flags: the model and, for models that learn from
// data, the dataset.
#ifndef DISTTRAIN_TRAINER_SETUP_H_
#define DISTTRAIN_TRAINER_SETUP_H_

#include <memory>

#include "absl/status/statusor.h"
#include "trainer/data/dataset.h"
#include "trainer/models/model.h"
#include "trainer/options.h"

namespace disttrain::trainer {

struct Setup {
  std::unique_ptr<Model> model;
  Dataset data;  // empty for the toy model
};

// `split` is "train" or "test"; NotFound/InvalidArgument errors name the files.
absl::StatusOr<Setup> BuildSetup(const TrainerOptions& options, const std::string& split);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_SETUP_H_
