// A training replica's (and the evaluator's) client of the parameter servers' embedding tables.
// A step's sparse traffic is one SparsePushPull per server (more when it would pass 4 MiB), all
// at once: the last batch's row gradients go out and the next batch's rows come back. Ids are
// sent to the server that holds them (trainer/embedding/id_hash.h) and the rows put back in the
// caller's order. Also the chief's checkpoint path: tables declared, exported and restored.
// Thread-compatible: one thread uses a client.
#ifndef DISTTRAIN_TRAINER_WORKER_SPARSE_CLIENT_H_
#define DISTTRAIN_TRAINER_WORKER_SPARSE_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "disttrain/trainer/v1/parameter_server.grpc.pb.h"
#include "trainer/embedding/table_config.h"

namespace disttrain::trainer {

// One table's part of a batch: its distinct ids and, per id, `dim` values (the rows pulled, or
// the gradients to push, summed over the batch's uses of the id).
struct TableRows {
  std::string table;
  int dim = 0;
  std::vector<uint64_t> ids;
  std::vector<float> values;
};

class SparseClient {
 public:
  // Rows per call at most: about 4 MiB of 16-float rows, well inside the servers' 8 MiB limit.
  static constexpr size_t kMaxCallBytes = size_t{4} << 20;

  SparseClient(const std::vector<std::string>& addresses, std::string worker);
  ~SparseClient();

  int num_ps() const { return static_cast<int>(stubs_.size()); }

  // Declares `tables` on every server; `reset` drops the rows of tables that exist already.
  absl::Status CreateTables(const std::vector<embedding::TableConfig>& tables, bool reset);

  // Pushes `push` (may be empty) and reads the rows of each `pull` entry's ids into its values
  // (resized to ids x dim). `train`: a training lookup (creates rows, counts uses).
  absl::Status PushPull(const std::vector<TableRows>& push, std::vector<TableRows>* pull,
                        bool train);

  // Streams `table`'s rows from every server to `sink`: those changed since this client's last
  // export of the table from that server, or all of them when `full` (or when the server
  // restarted since). `*complete` (may be null) tells whether every server sent all its rows.
  // Each server's stream ends with DEADLINE_EXCEEDED after `deadline`.
  absl::Status Export(const std::string& table, bool full,
                      absl::FunctionRef<absl::Status(const v1::RowBlock&)> sink,
                      bool* complete = nullptr, int deadline_seconds = 600);

  // Restores rows: Add() routes each row to the server that holds its id; Finish() ends the
  // streams and reports the first error.
  class Import {
   public:
    explicit Import(SparseClient* client);
    ~Import();
    absl::Status Add(const std::string& table, uint32_t row_floats, uint64_t id, const float* row);
    absl::Status Finish();

   private:
    absl::Status Flush(int ps);
    SparseClient* client_;
    struct Stream;
    std::vector<std::unique_ptr<Stream>> streams_;
  };

  // Bytes of values sent and received since the start (tests, metrics).
  uint64_t bytes_pushed() const { return bytes_pushed_; }
  uint64_t bytes_pulled() const { return bytes_pulled_; }

 private:
  std::vector<std::unique_ptr<v1::ParameterServer::Stub>> stubs_;
  const std::string worker_;
  // The version and incarnation each server's last export of a table reached.
  std::map<std::pair<std::string, int>, std::pair<uint64_t, std::string>> exported_;
  uint64_t bytes_pushed_ = 0, bytes_pulled_ = 0;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_SPARSE_CLIENT_H_
