// What an embedding table is: its row width, how its rows are initialised, updated, admitted and
// evicted. The chief declares the tables to every parameter server (CreateTables); the schema file
// (trainer/data/schema.h) is where a user writes them. Value type.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_TABLE_CONFIG_H_
#define DISTTRAIN_TRAINER_EMBEDDING_TABLE_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace disttrain::trainer::embedding {

enum class RowOptimizerKind { kSgd, kAdagrad, kFtrl };
enum class Eviction { kLru, kLfu };

struct TableConfig {
  std::string name;
  int dim = 8;
  RowOptimizerKind optimizer = RowOptimizerKind::kAdagrad;
  float learning_rate = 0.05f;
  // Adagrad's and FTRL's starting squared-gradient sum (TensorFlow's default 0.1).
  float initial_accumulator = 0.1f;
  // FTRL-Proximal (McMahan et al., KDD'13): L1 and L2 strengths and beta.
  float l1 = 0, l2 = 0, beta = 1;
  // A new row is uniform with this standard deviation (0: zeros), drawn from (seed, id) alone.
  float init_stddev = 0.01f;
  uint64_t seed = 0;
  // Rows this table may hold on one parameter server; 0: unbounded. Past it, a new row evicts
  // one of the least recently (lru) or least frequently (lfu) used.
  uint64_t capacity = 0;
  Eviction eviction = Eviction::kLru;
  // A row is created once its id was seen in this many training lookups; until then the id reads
  // as its initial value and its gradients are dropped. 0 or 1: at first sight.
  uint32_t min_count = 0;
};

absl::StatusOr<RowOptimizerKind> ParseRowOptimizer(absl::string_view name);
absl::string_view RowOptimizerName(RowOptimizerKind kind);
absl::StatusOr<Eviction> ParseEviction(absl::string_view name);
absl::string_view EvictionName(Eviction eviction);

// InvalidArgument naming the table and the field for a config no table can have.
absl::Status ValidateTableConfig(const TableConfig& config);

// The floats of optimizer state each row keeps beside its values, per value.
int StatePerValue(RowOptimizerKind kind);

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_TABLE_CONFIG_H_
