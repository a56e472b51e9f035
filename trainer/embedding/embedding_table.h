// One parameter server's part of an embedding table: rows of `dim` floats keyed by 64-bit ids,
// each with its optimiser state beside it (row_optimizer.h), created on first sight (or after
// `min_count` sightings), bounded by a capacity with eviction, and versioned for incremental
// checkpoints.
//
// Concurrency: the table is split into stripes by id hash (up to kStripes; fewer for a small
// capacity, so that each stripe holds enough rows to pick eviction victims from), each with its own
// lock, hash index (flat_index.h) and row storage; a pull or push locks one stripe per id, for one
// row's copy or update, so pushes from many workers update rows in parallel (Hogwild per row,
// no table-wide lock). A row is always read and written whole: no reader sees half an update.
//
// Memory: rows live in chunks of kChunkRows, so a table's resident size follows its row count
// (no doubling of one big buffer); an evicted row's slot is refilled by the stripe's last row, so
// a table at its capacity stops allocating. Thread-safe.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_EMBEDDING_TABLE_H_
#define DISTTRAIN_TRAINER_EMBEDDING_EMBEDDING_TABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "trainer/embedding/count_min_sketch.h"
#include "trainer/embedding/flat_index.h"
#include "trainer/embedding/table_config.h"

namespace disttrain::trainer::embedding {

class EmbeddingTable {
 public:
  static constexpr int kStripes = 64;
  // Rows per stripe at least, for a table with a capacity (eviction samples within a stripe).
  static constexpr uint64_t kMinStripeRows = 256;
  static constexpr uint32_t kChunkRows = 1024;
  // Rows sampled per eviction; the least recently (or frequently) used of them goes: Redis's
  // approximation of LRU/LFU, without a list threaded through every row.
  static constexpr int kEvictionSamples = 8;

  // `config` must be valid (ValidateTableConfig). `first_version`: where row versions start; a
  // table that replaces another starts past the old one's, so that an export since a version of
  // the old table still lists every row of the new one.
  explicit EmbeddingTable(TableConfig config, uint32_t first_version = 1);
  ~EmbeddingTable();

  const TableConfig& config() const { return config_; }
  int dim() const { return config_.dim; }
  // Floats a row takes with its optimiser state: values first, then the state.
  int row_floats() const { return row_floats_; }

  // Copies the rows of `ids` into `out` (ids.size() x dim). `train`: a training lookup, which
  // counts the sighting, creates a missing row once admitted and marks the row used. A missing
  // row reads as its initial value.
  void Pull(absl::Span<const uint64_t> ids, bool train, float* out);
  // Applies `grads` (ids.size() x dim, each id once) to the rows of `ids`. A missing row (never
  // admitted, or evicted since its pull) is created first when admitted; the gradients of ids not
  // admitted are dropped and counted.
  void Push(absl::Span<const uint64_t> ids, const float* grads);

  // Starts a new version and returns the one before: every row changed from now on has a version
  // above the returned one.
  uint32_t Mark();
  uint32_t version() const { return version_.load(); }
  // The rows changed after version `since` (0: every row), stripe by stripe: each stripe's rows
  // are copied out under its lock, then fn(ids, rows) (rows: ids.size() x row_floats()) runs
  // without it, so a slow consumer (a checkpoint's stream) never holds up training.
  void ForEachStripe(
      uint32_t since,
      absl::FunctionRef<void(absl::Span<const uint64_t> ids, absl::Span<const float> rows)> fn)
      const;
  // The same, row by row: fn(id, row).
  void ForEachRow(uint32_t since, absl::FunctionRef<void(uint64_t id, const float* row)> fn) const;
  // Sets the row of `id` (values then state) as a checkpoint holds it, creating it if needed.
  void Restore(uint64_t id, const float* row);
  // Drops every row and count.
  void Clear();

  struct Stats {
    uint64_t rows = 0;
    uint64_t created = 0;
    uint64_t evicted = 0;
    uint64_t not_admitted = 0;  // gradients dropped because their id was not admitted yet
    uint64_t pulled = 0;        // rows read
    uint64_t updated = 0;       // rows updated
    uint64_t memory_bytes = 0;  // rows, their state, the indexes and the sketches
  };
  Stats stats() const;

 private:
  // kChunkRows slots: rows (values then state) and what the table keeps of each.
  struct Chunk {
    explicit Chunk(int row_floats)
        : rows(new float[size_t{kChunkRows} * row_floats]),
          ids(new uint64_t[kChunkRows]),
          ticks(new uint32_t[kChunkRows]),
          uses(new uint32_t[kChunkRows]),
          versions(new uint32_t[kChunkRows]) {}
    std::unique_ptr<float[]> rows;
    std::unique_ptr<uint64_t[]> ids;
    std::unique_ptr<uint32_t[]> ticks;     // last use (lru)
    std::unique_ptr<uint32_t[]> uses;      // uses, saturating (lfu)
    std::unique_ptr<uint32_t[]> versions;  // last change (incremental checkpoints)
  };
  struct Stripe {
    mutable absl::Mutex mu;
    FlatIndex index ABSL_GUARDED_BY(mu);
    std::vector<std::unique_ptr<Chunk>> chunks ABSL_GUARDED_BY(mu);
    uint32_t used ABSL_GUARDED_BY(mu) = 0;                       // slots 0..used-1 hold rows
    std::unique_ptr<CountMinSketch> sketch ABSL_GUARDED_BY(mu);  // min_count > 1
    uint64_t rng ABSL_GUARDED_BY(mu) = 0;
  };
  Stripe& StripeOf(uint64_t id) const;
  // A new slot for `id` in `s` (evicting a row first when the table is full), holding `row` (or
  // the initial row and state when null), used now.
  uint32_t Create(Stripe& s, uint64_t id, const float* row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  void EvictOne(Stripe& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  bool Admitted(Stripe& s, uint64_t id, bool count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  const TableConfig config_;
  const int row_floats_;
  const int stripe_count_;
  std::unique_ptr<Stripe[]> stripes_;
  std::atomic<uint32_t> clock_{1};  // ticks once per pull or push call: when a row was used
  std::atomic<uint32_t> version_;   // Mark() moves it on
  std::atomic<int64_t> rows_{0};
  std::atomic<uint64_t> created_{0}, evicted_{0}, not_admitted_{0}, pulled_{0}, updated_{0};
};

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_EMBEDDING_TABLE_H_
