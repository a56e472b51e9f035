// The chief's copy of the parameter servers' embedding rows, beside PsCopy's dense variables
// (ps_copy.h): each table's rows with their optimiser state, merged from the servers' exports of
// the rows changed since the last one (ExportRows with since_version), so that a copy round costs
// the rows that changed, not the tables. A server that dies is then restored from these rows
// (SparseEngine::PrepareServersFromCopy) rather than from the last table checkpoint.
//
// Rows are only added or replaced: a row that a server evicts (a table with a capacity) stays
// here, and comes back on a restore, where the server evicts again past its capacity. The copy
// therefore holds every row any server held since the chief started: at most the tables' rows
// times (row_floats x 4 + about 28) bytes.
//
// Thread-compatible: PsCopy guards it.
#ifndef DISTTRAIN_TRAINER_WORKER_TABLE_COPY_H_
#define DISTTRAIN_TRAINER_WORKER_TABLE_COPY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "disttrain/trainer/v1/parameter_server.pb.h"
#include "trainer/checkpoint/table_checkpoint.h"
#include "trainer/embedding/flat_index.h"

namespace disttrain::trainer {

class TableCopy {
 public:
  // Merges a block of an export: each row replaces the copy's row of its id. InvalidArgument,
  // with nothing merged, for rows of a size the block does not say or other than the table's.
  absl::Status Apply(const v1::RowBlock& block);
  // Calls `fn` once per table that holds rows (in name order), with all of them: its ids and
  // ids.size() x row_floats floats. The first error stops the walk and is returned.
  absl::Status ForEachTable(TableRowsFn fn) const;

  uint64_t rows() const;
  size_t MemoryBytes() const;

 private:
  struct Table {
    uint32_t row_floats = 0;
    embedding::FlatIndex index;  // id -> its place in ids and rows
    std::vector<uint64_t> ids;
    std::vector<float> rows;
  };
  std::map<std::string, Table> tables_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_TABLE_COPY_H_
