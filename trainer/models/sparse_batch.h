// A batch of recommendation examples as the sparse models compute on it: labels, dense inputs,
// and for each field its examples' ids as positions in the batch's distinct ids of the field's
// table. A table's distinct ids are what a worker pulls and pushes (each once per batch, its
// gradient summed over the batch's uses). Value types; BatchBuilder is thread-compatible.
#ifndef DISTTRAIN_TRAINER_MODELS_SPARSE_BATCH_H_
#define DISTTRAIN_TRAINER_MODELS_SPARSE_BATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "trainer/data/example.h"
#include "trainer/data/schema.h"

namespace disttrain::trainer {

// Which embedding table each field reads, and the width of the dense inputs.
struct FeatureLayout {
  struct Field {
    std::string name;
    int table = 0;  // index in `tables`
    Pooling pooling = Pooling::kMean;
  };
  std::vector<std::string> tables;
  std::vector<int> dims;  // per table
  std::vector<Field> fields;
  int dense_width = 0;

  static FeatureLayout FromSchema(const Schema& schema);
};

struct SparseBatch {
  int n = 0;
  std::vector<float> labels;  // n
  std::vector<float> dense;   // n x dense_width
  struct Field {
    std::vector<uint32_t> offsets;  // n + 1: example i's ids are rows[offsets[i]..offsets[i+1])
    std::vector<uint32_t> rows;     // positions in table_ids of the field's table
  };
  std::vector<Field> fields;
  std::vector<std::vector<uint64_t>> table_ids;  // per table: the batch's distinct ids
};

class BatchBuilder {
 public:
  explicit BatchBuilder(const FeatureLayout& layout) : layout_(layout) {}
  // `examples` must have been encoded with the layout's schema.
  void Build(const std::vector<Example>& examples, SparseBatch* out);

 private:
  const FeatureLayout& layout_;
  std::vector<absl::flat_hash_map<uint64_t, uint32_t>> seen_;  // per table, reused
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_SPARSE_BATCH_H_
