// The chief's copy of what the parameter servers hold: every dense variable and the global step,
// pulled on a thread of its own (over connections of its own) every `interval`, so that a
// parameter server that dies is restored from a copy at most about `interval` old rather than
// from the last checkpoint on disk (replica.cc's InitializeOrRestore). The checkpoint stays the
// fallback: when the chief itself restarts, its copy is gone.
//
// With embedding tables (an `export_rows` function), each round after the dense pull also merges
// the rows the servers changed since the last round into a TableCopy (table_copy.h); a copy is
// then usable only once every table was exported whole from every server.
//
// Cost: one pull of the whole model per interval (the parameter servers serve it as they serve a
// worker's pull) and the model's size in the chief's memory. A pull never takes more than a tenth
// of the time: the next one starts `interval` or 10 x the last pull's duration after it,
// whichever is later, so a large model is copied less often rather than loading the servers.
//
// Thread-safe.
#ifndef DISTTRAIN_TRAINER_WORKER_PS_COPY_H_
#define DISTTRAIN_TRAINER_WORKER_PS_COPY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "disttrain/trainer/v1/parameter_server.pb.h"
#include "trainer/checkpoint/table_checkpoint.h"
#include "trainer/models/model.h"
#include "trainer/worker/table_copy.h"

namespace disttrain::trainer {

class PsCopy {
 public:
  // Reads every variable into its argument and returns their global step (PsClient::PullAll).
  using Pull = std::function<absl::StatusOr<int64_t>(Params*)>;
  // Passes the rows every server changed since the last call, block by block, to the sink
  // (SparseClient::Export of each table); the sink's error stops it.
  using RowSink = absl::FunctionRef<absl::Status(const v1::RowBlock&)>;
  using ExportRows = std::function<absl::Status(RowSink)>;

  struct Copy {
    int64_t global_step = 0;
    Params params;
    absl::Time taken;         // when the pull that read it started
    uint64_t table_rows = 0;  // embedding rows held (ReadTables) when Latest() was called
  };

  // `clock` outlives the copy; it times the pulls and the copies, the waits are real.
  // `export_rows`: the servers also hold embedding tables, kept too.
  PsCopy(Pull pull, absl::Duration interval, const Clock* clock = RealClock::Get(),
         ExportRows export_rows = nullptr);
  ~PsCopy();  // stops the thread
  PsCopy(const PsCopy&) = delete;
  PsCopy& operator=(const PsCopy&) = delete;

  // Starts pulling; once is enough (later calls do nothing).
  void Start();
  // The newest complete copy; nullopt before the first pull succeeded (and, with tables, before
  // the first round whose every export succeeded). A failed pull (a server gone) keeps the last
  // good one; a failed export keeps the rows merged before it.
  std::optional<Copy> Latest() const;
  // Calls `fn` with the embedding rows held, table by table; no round merges rows meanwhile.
  absl::Status ReadTables(TableRowsFn fn) const;
  // Copies taken so far and pulls that failed (tests, logs).
  int64_t copies() const;
  int64_t failures() const;

 private:
  void Loop();

  const Pull pull_;
  const ExportRows export_rows_;
  const absl::Duration interval_;
  const Clock* const clock_;
  mutable absl::Mutex mu_;
  std::optional<Copy> latest_ ABSL_GUARDED_BY(mu_);
  bool tables_ready_ ABSL_GUARDED_BY(mu_) = false;  // every table exported whole once
  mutable absl::Mutex tables_mu_;                   // never held with mu_
  TableCopy tables_ ABSL_GUARDED_BY(tables_mu_);
  int64_t copies_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_PS_COPY_H_
