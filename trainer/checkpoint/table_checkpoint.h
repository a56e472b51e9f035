// Embedding tables in --model-dir beside the dense checkpoints: "tables-<step>.bin" holds every
// table's rows (ids, values and optimiser state) at the checkpoint of `step`: all of them (a full
// checkpoint) or only those changed since the checkpoint it builds on (its base, a delta). A
// table file is written while the rows stream in from the servers, to a temporary name renamed
// into place, and checksummed (CRC-32) as a whole; a reader checks the checksum before it reads
// a row. Restoring step S applies the full file S's chain starts from, then each delta in order.
// Functions are thread-safe for different directories.
#ifndef DISTTRAIN_TRAINER_CHECKPOINT_TABLE_CHECKPOINT_H_
#define DISTTRAIN_TRAINER_CHECKPOINT_TABLE_CHECKPOINT_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace disttrain::trainer {

inline constexpr int64_t kFullTableCheckpoint = -1;

class TableCheckpointWriter {
 public:
  // `base`: the step of the checkpoint this one adds to, or kFullTableCheckpoint.
  static absl::StatusOr<std::unique_ptr<TableCheckpointWriter>> Create(const std::string& dir,
                                                                       int64_t step, int64_t base);
  ~TableCheckpointWriter();
  // Rows of `table`: ids.size() x row_floats floats.
  absl::Status Add(const std::string& table, uint32_t row_floats, absl::Span<const uint64_t> ids,
                   absl::Span<const float> rows);
  // Ends the file and moves it into place; without it, the file is discarded.
  absl::Status Commit();
  uint64_t rows() const { return rows_; }

 private:
  TableCheckpointWriter() = default;
  void Write(const void* data, size_t size);

  std::string tmp_, path_;
  std::ofstream out_;
  uint32_t crc_ = 0;
  uint64_t rows_ = 0;
  bool committed_ = false;
};

using TableRowsFn =
    absl::FunctionRef<absl::Status(const std::string& table, uint32_t row_floats,
                                   absl::Span<const uint64_t> ids, absl::Span<const float> rows)>;

// The base of tables-<step>.bin (kFullTableCheckpoint for a full one), after checking the file's
// checksum; DataLoss for a corrupt file, NotFound for a missing one.
absl::StatusOr<int64_t> CheckTableCheckpoint(const std::string& dir, int64_t step);
// Calls `fn` for every block of rows of tables-<step>.bin (checked first).
absl::Status ReadTableCheckpoint(const std::string& dir, int64_t step, TableRowsFn fn);
// The steps of the files that restore `step`, its full checkpoint first; DataLoss or NotFound
// naming the file that breaks the chain.
absl::StatusOr<std::vector<int64_t>> TableCheckpointChain(const std::string& dir, int64_t step);
// Removes the table files that none of the chains of `kept` (dense checkpoint steps) needs.
void PruneTableCheckpoints(const std::string& dir, const std::vector<int64_t>& kept);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_CHECKPOINT_TABLE_CHECKPOINT_H_
