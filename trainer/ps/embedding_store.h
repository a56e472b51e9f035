// A parameter server's embedding tables and the requests on them (proto: CreateTables,
// SparsePushPull, ExportRows, ImportRows), without gRPC: the server's methods hand requests
// here. A request is checked whole before anything is applied: an unknown table, values of the
// wrong size, a gradient that is not finite or an id of another server's share is refused with
// InvalidArgument and changes nothing. Thread-safe: requests on the same or different tables run
// at once; rows update under their stripes' locks (trainer/embedding/embedding_table.h).
#ifndef DISTTRAIN_TRAINER_PS_EMBEDDING_STORE_H_
#define DISTTRAIN_TRAINER_PS_EMBEDDING_STORE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "disttrain/trainer/v1/parameter_server.pb.h"
#include "trainer/embedding/embedding_table.h"

namespace disttrain::trainer {

// TableSpec (the wire's) and TableConfig (the table's) both ways; InvalidArgument naming the
// table for a spec no table can have.
absl::StatusOr<embedding::TableConfig> TableConfigOf(const v1::TableSpec& spec);
v1::TableSpec TableSpecOf(const embedding::TableConfig& config);

class EmbeddingStore {
 public:
  // This server's place among `num_ps` servers: it holds the ids PsOfId() gives it.
  EmbeddingStore(int ps_index, int num_ps);

  absl::Status CreateTables(const v1::CreateTablesRequest& request);
  absl::Status PushPull(const v1::SparsePushPullRequest& request,
                        v1::SparsePushPullResponse* response);
  // The rows of `request.table` changed since the request's version, in blocks of at most
  // `block_bytes`, each passed to `write` (false: stop). The first block carries the version
  // the export reaches and whether it is full; a table without rows gives one empty block.
  absl::Status Export(const v1::ExportRowsRequest& request, const std::string& incarnation,
                      size_t block_bytes, absl::FunctionRef<bool(const v1::RowBlock&)> write);
  // Restores one block of rows; InvalidArgument for an unknown table, a row size that is not
  // the table's, or an id of another server's share.
  absl::Status Import(const v1::RowBlock& block);

  std::shared_ptr<embedding::EmbeddingTable> table(const std::string& name) const;
  std::vector<std::shared_ptr<embedding::EmbeddingTable>> tables() const;

 private:
  absl::Status CheckIds(const std::string& table,
                        const google::protobuf::RepeatedField<uint64_t>& ids) const;

  const int ps_index_;
  const int num_ps_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<embedding::EmbeddingTable>> tables_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_EMBEDDING_STORE_H_
