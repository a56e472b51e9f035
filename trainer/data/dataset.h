// Labelled image datasets in the IDX format MNIST uses (plain or gzip-compressed), scaled to
// [0, 1]. Fashion-MNIST comes from the Debian package dataset-fashion-mnist. Value types;
// thread-compatible.
#ifndef DISTTRAIN_TRAINER_DATA_DATASET_H_
#define DISTTRAIN_TRAINER_DATA_DATASET_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/models/model.h"

namespace disttrain::trainer {

inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

struct Dataset {
  std::vector<float> x;  // n rows of dim features
  std::vector<int32_t> y;
  int n = 0;
  int dim = 0;
  int classes = 10;

  Batch Rows(int start, int count) const {
    return {x.data() + static_cast<size_t>(start) * dim, y.data() + start, count, dim};
  }
};

// Reads an images file and a labels file (".gz" or not). Errors name the file and the problem.
absl::StatusOr<Dataset> ReadIdx(const std::string& images_path, const std::string& labels_path);

// "train" or "test" split of Fashion-MNIST from `dir` (default kFashionMnistDir).
absl::StatusOr<Dataset> LoadFashionMnist(const std::string& dir, const std::string& split);

// The examples with index % count == part: each worker trains on its own shard.
Dataset ShardOf(const Dataset& all, int part, int count);

// Endless shuffled mini-batches over a dataset; the order depends only on the seed.
class BatchIterator {
 public:
  BatchIterator(const Dataset* data, int batch_size, uint64_t seed);
  Batch Next();
  // The same next batch, gathered into `x` (batch_size() rows) and `y` (e.g. a GPU's pinned
  // staging buffers) instead of the iterator's own; large batches are copied by several threads.
  Batch NextInto(float* x, int32_t* y);
  int batch_size() const { return batch_size_; }

 private:
  const Dataset* data_;
  int batch_size_;
  std::mt19937_64 rng_;
  std::vector<int> order_;
  size_t pos_ = 0;
  std::vector<float> x_;
  std::vector<int32_t> y_;
  std::vector<size_t> rows_;  // the next batch's row indices
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_DATASET_H_
