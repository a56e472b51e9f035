// Where a replica's (or the evaluator's) examples come from: the schema's files, split into a
// training and a test part, the training part shared among the replicas, streamed record by
// record through a shuffle buffer, pass after pass. Memory is the shuffle buffer, not the data:
// a dataset larger than a worker's memory trains. Thread-compatible.
//
// - Test split: `test_files` when the schema lists them, else the records whose hash of
//   (split_seed, file, record) falls under `test_fraction`: the same on every machine, whatever
//   the number of workers.
// - Sharding: with at least as many files as replicas, file i goes to replica i mod R; otherwise
//   record r (counted over all files) goes to replica r mod R.
// - A record the schema cannot read stops the run with an error naming it; with
//   skip_bad_records it is skipped and counted instead (the first few are logged).
#ifndef DISTTRAIN_TRAINER_DATA_EXAMPLE_SOURCE_H_
#define DISTTRAIN_TRAINER_DATA_EXAMPLE_SOURCE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "trainer/data/example.h"
#include "trainer/data/schema.h"

namespace disttrain::trainer {

struct SourceOptions {
  bool test = false;  // the test split, one pass in file order; else training, endless
  int part = 0;       // this replica's share of the training split
  int parts = 1;
  uint64_t seed = 1;  // the shuffle's
  size_t shuffle_buffer = 10000;
  bool skip_bad_records = false;
};

class ExampleSource {
 public:
  // InvalidArgument/NotFound for files that cannot be opened or joined.
  static absl::StatusOr<std::unique_ptr<ExampleSource>> Open(const Schema& schema,
                                                             const SourceOptions& options);
  virtual ~ExampleSource() = default;
  // The next example: true, or false when a one-pass (test) source is done. A training pass
  // that finds no example of this replica is an error (not an endless loop).
  virtual absl::StatusOr<bool> Next(Example* out) = 0;
  virtual uint64_t skipped() const = 0;
};

// Whether record `record` of file `file` belongs to the test split of `fraction`.
bool InTestSplit(uint64_t split_seed, int file, int64_t record, double fraction);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_EXAMPLE_SOURCE_H_
