// The schema file of a recommendation (click-through) dataset: where the examples are, how each
// column becomes features, and the embedding tables those features use. YAML or JSON; every
// field is documented in docs/trainer.md#the-schema-file, with examples/movielens/schema.yaml as
// a worked example. Parsing checks everything a run would trip over later (unknown keys, a
// column without a table, a table no column uses) and names the field. Value types.
#ifndef DISTTRAIN_TRAINER_DATA_SCHEMA_H_
#define DISTTRAIN_TRAINER_DATA_SCHEMA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/embedding/table_config.h"

namespace disttrain::trainer {

enum class ColumnKind { kCategorical, kMultiCategorical, kNumeric };
enum class Pooling { kMean, kSum };

struct ColumnSpec {
  std::string name;
  ColumnKind kind = ColumnKind::kCategorical;
  // The embedding table of a categorical column, or of a numeric one with buckets.
  std::string table;
  // Multi-valued: what separates the values in a text file (TFRecord lists need none), and how
  // an example's values are pooled into one vector.
  std::string separator = " ";
  Pooling pooling = Pooling::kMean;
  // Numeric: with bucket boundaries (ascending), the column is categorical by bucket; without,
  // the value goes to the dense part of the model, optionally as log(1 + max(x, 0)).
  std::vector<float> buckets;
  bool log1p = false;
  float default_value = 0;  // an empty numeric field
  // A feature of the model (a field) rather than a dense input.
  bool is_field() const { return kind != ColumnKind::kNumeric || !buckets.empty(); }
};

struct JoinSpec {
  std::vector<std::string> files;  // delimited text with a header, keyed by `key`
  std::string key;
};

struct Schema {
  // "csv", "tsv" or "tfrecord"; "synthetic-criteo" generates Criteo-shaped rows instead.
  std::string format = "csv";
  char delimiter = ',';
  std::vector<std::string> files;       // training examples (and test ones, by test_fraction)
  std::vector<std::string> test_files;  // the test split, when it is kept apart
  double test_fraction = 0;             // of `files`, by a hash of (split_seed, file, record)
  uint64_t split_seed = 1;
  std::vector<JoinSpec> joins;
  std::string label;
  std::optional<float> label_threshold;  // label = value >= threshold; else it must be 0 or 1
  std::vector<ColumnSpec> columns;
  std::vector<embedding::TableConfig> tables;
  // The first-order ("wide") weights of every field's table live in a table of width 1 named
  // "<table>/wide", configured like this one (FTRL by default).
  embedding::TableConfig wide;
  uint64_t synthetic_rows = 0;  // synthetic-criteo: rows in the training split per pass

  // The fields (columns that are model features) and the dense inputs, in column order.
  std::vector<const ColumnSpec*> fields() const;
  std::vector<const ColumnSpec*> dense_inputs() const;
  const embedding::TableConfig* table(absl::string_view name) const;
};

// The wide (first-order) table of `table`.
std::string WideTableName(absl::string_view table);

// Parses a schema (YAML or JSON). Relative file names are resolved against `data_dir`.
absl::StatusOr<Schema> ParseSchema(absl::string_view text, const std::string& data_dir);
// Reads and parses `path`; relative file names resolve against `data_dir`, or the schema's own
// folder when `data_dir` is empty.
absl::StatusOr<Schema> LoadSchema(const std::string& path, const std::string& data_dir);

// The Criteo-shaped synthetic dataset's schema: 13 numeric columns (I1..I13, log1p) and 26
// categorical ones (C1..C26) with the Kaggle day's cardinalities, each its own table of `dim`.
Schema SyntheticCriteoSchema(int dim, uint64_t rows);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_SCHEMA_H_
