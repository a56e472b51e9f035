#include "trainer/ps/embedding_store.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {

using embedding::EmbeddingTable;
using embedding::TableConfig;

absl::StatusOr<TableConfig> TableConfigOf(const v1::TableSpec& spec) {
  TableConfig c;
  c.name = spec.name();
  c.dim = static_cast<int>(std::min<uint32_t>(spec.dim(), 1u << 20));
  auto in_table = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("table \"", spec.name(), "\": ", s.message()));
  };
  absl::StatusOr<embedding::RowOptimizerKind> opt = embedding::ParseRowOptimizer(spec.optimizer());
  if (!opt.ok()) return in_table(opt.status());
  c.optimizer = *opt;
  absl::StatusOr<embedding::Eviction> ev =
      embedding::ParseEviction(spec.eviction().empty() ? "lru" : spec.eviction());
  if (!ev.ok()) return in_table(ev.status());
  c.eviction = *ev;
  c.learning_rate = spec.learning_rate();
  c.initial_accumulator = spec.initial_accumulator();
  c.l1 = spec.l1();
  c.l2 = spec.l2();
  c.beta = spec.beta();
  c.init_stddev = spec.init_stddev();
  c.seed = spec.seed();
  c.capacity = spec.capacity();
  c.min_count = spec.min_count();
  if (absl::Status s = embedding::ValidateTableConfig(c); !s.ok()) return s;
  return c;
}

v1::TableSpec TableSpecOf(const TableConfig& c) {
  v1::TableSpec s;
  s.set_name(c.name);
  s.set_dim(static_cast<uint32_t>(c.dim));
  s.set_optimizer(std::string(embedding::RowOptimizerName(c.optimizer)));
  s.set_learning_rate(c.learning_rate);
  s.set_initial_accumulator(c.initial_accumulator);
  s.set_l1(c.l1);
  s.set_l2(c.l2);
  s.set_beta(c.beta);
  s.set_init_stddev(c.init_stddev);
  s.set_seed(c.seed);
  s.set_capacity(c.capacity);
  s.set_eviction(std::string(embedding::EvictionName(c.eviction)));
  s.set_min_count(c.min_count);
  return s;
}

EmbeddingStore::EmbeddingStore(int ps_index, int num_ps)
    : ps_index_(ps_index), num_ps_(std::max(1, num_ps)) {}

std::shared_ptr<EmbeddingTable> EmbeddingStore::table(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<EmbeddingTable>> EmbeddingStore::tables() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<EmbeddingTable>> out;
  for (const auto& [name, t] : tables_) out.push_back(t);
  return out;
}

absl::Status EmbeddingStore::CreateTables(const v1::CreateTablesRequest& request) {
  std::vector<TableConfig> configs;
  for (const v1::TableSpec& spec : request.tables()) {
    absl::StatusOr<TableConfig> c = TableConfigOf(spec);
    if (!c.ok()) return c.status();
    configs.push_back(*std::move(c));
  }
  absl::MutexLock lock(&mu_);
  for (const TableConfig& c : configs) {
    auto it = tables_.find(c.name);
    if (it == tables_.end()) continue;
    const TableConfig& had = it->second->config();
    if (had.dim != c.dim || had.optimizer != c.optimizer)
      return absl::FailedPreconditionError(
          absl::StrCat("table \"", c.name, "\" exists with dim ", had.dim, " and optimizer ",
                       embedding::RowOptimizerName(had.optimizer), "; asked for dim ", c.dim,
                       " and ", embedding::RowOptimizerName(c.optimizer)));
  }
  for (TableConfig& c : configs) {
    auto it = tables_.find(c.name);
    if (it != tables_.end() && !request.reset()) continue;
    // A reset replaces the table: pulls under way finish on the old one, which goes with them.
    const uint32_t first = it == tables_.end() ? 1 : it->second->version() + 1;
    const std::string name = c.name;
    tables_[name] = std::make_shared<EmbeddingTable>(std::move(c), first);
  }
  return absl::OkStatus();
}

absl::Status EmbeddingStore::CheckIds(const std::string& table,
                                      const google::protobuf::RepeatedField<uint64_t>& ids) const {
  for (uint64_t id : ids) {
    const int owner = embedding::PsOfId(id, num_ps_);
    if (owner != ps_index_)
      return absl::InvalidArgumentError(absl::StrCat("table \"", table, "\": id ", id,
                                                     " belongs to ps ", owner, ", not ps ",
                                                     ps_index_, " of ", num_ps_));
  }
  return absl::OkStatus();
}

absl::Status EmbeddingStore::PushPull(const v1::SparsePushPullRequest& request,
                                      v1::SparsePushPullResponse* response) {
  {
    absl::MutexLock lock(&mu_);
    if (tables_.empty())
      return absl::FailedPreconditionError(
          "this server holds no embedding tables yet (the chief declares them; a restarted "
          "server waits for its restore)");
  }
  // Everything is checked before anything is applied.
  std::vector<std::shared_ptr<EmbeddingTable>> pushed, pulled;
  for (const v1::SparseRows& rows : request.push()) {
    std::shared_ptr<EmbeddingTable> t = table(rows.table());
    if (t == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("unknown table \"", rows.table(), "\""));
    const size_t want = static_cast<size_t>(rows.ids_size()) * t->dim() * sizeof(float);
    if (rows.values().size() != want)
      return absl::InvalidArgumentError(absl::StrCat(
          "table \"", rows.table(), "\": ", rows.ids_size(), " ids of width ", t->dim(), " need ",
          want, " bytes of gradients, got ", rows.values().size()));
    const size_t n = rows.values().size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) {
      float g;
      std::memcpy(&g, rows.values().data() + i * sizeof(float), sizeof(float));
      if (!std::isfinite(g))
        return absl::InvalidArgumentError(
            absl::StrCat("table \"", rows.table(), "\": the gradient of id ",
                         rows.ids(static_cast<int>(i / t->dim())), " is not finite (", g, ")"));
    }
    if (absl::Status s = CheckIds(rows.table(), rows.ids()); !s.ok()) return s;
    pushed.push_back(std::move(t));
  }
  for (const v1::SparseRows& rows : request.pull()) {
    std::shared_ptr<EmbeddingTable> t = table(rows.table());
    if (t == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("unknown table \"", rows.table(), "\""));
    if (absl::Status s = CheckIds(rows.table(), rows.ids()); !s.ok()) return s;
    pulled.push_back(std::move(t));
  }
  std::vector<float> grads;
  for (int i = 0; i < request.push_size(); ++i) {
    const v1::SparseRows& rows = request.push(i);
    // The bytes' alignment is protobuf's: copy into floats once.
    grads.resize(rows.values().size() / sizeof(float));
    std::memcpy(grads.data(), rows.values().data(), rows.values().size());
    pushed[i]->Push({rows.ids().data(), static_cast<size_t>(rows.ids_size())}, grads.data());
  }
  for (int i = 0; i < request.pull_size(); ++i) {
    const v1::SparseRows& rows = request.pull(i);
    v1::SparseRows* out = response->add_rows();
    out->set_table(rows.table());
    thread_local std::vector<float> values;
    values.resize(static_cast<size_t>(rows.ids_size()) * pulled[i]->dim());
    pulled[i]->Pull({rows.ids().data(), static_cast<size_t>(rows.ids_size())}, request.train(),
                    values.data());
    out->set_values(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  return absl::OkStatus();
}

absl::Status EmbeddingStore::Export(const v1::ExportRowsRequest& request,
                                    const std::string& incarnation, size_t block_bytes,
                                    absl::FunctionRef<bool(const v1::RowBlock&)> write) {
  std::shared_ptr<EmbeddingTable> t = table(request.table());
  if (t == nullptr)
    return absl::NotFoundError(absl::StrCat("unknown table \"", request.table(), "\""));
  const bool full = request.since_version() == 0 || request.incarnation() != incarnation;
  const uint32_t since = full ? 0 : static_cast<uint32_t>(request.since_version());
  const uint32_t version = t->Mark();
  const size_t rf = static_cast<size_t>(t->row_floats());
  const size_t per_block = std::max<size_t>(1, block_bytes / (rf * sizeof(float) + 8));
  v1::RowBlock block;
  bool first = true, ok = true;
  auto flush = [&] {
    block.set_table(request.table());
    block.set_row_floats(static_cast<uint32_t>(rf));
    if (first) {
      block.set_version(version);
      block.set_full(full);
      block.set_incarnation(incarnation);
    }
    ok = write(block);
    first = false;
    block.Clear();
  };
  t->ForEachStripe(since, [&](absl::Span<const uint64_t> ids, absl::Span<const float> rows) {
    for (size_t i = 0; i < ids.size() && ok; ++i) {
      block.add_ids(ids[i]);
      block.mutable_rows()->append(reinterpret_cast<const char*>(&rows[i * rf]),
                                   rf * sizeof(float));
      if (static_cast<size_t>(block.ids_size()) == per_block) flush();
    }
  });
  if (ok && (first || block.ids_size() > 0)) flush();
  if (!ok) return absl::CancelledError("the reader of the export went away");
  return absl::OkStatus();
}

absl::Status EmbeddingStore::Import(const v1::RowBlock& block) {
  std::shared_ptr<EmbeddingTable> t = table(block.table());
  if (t == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("unknown table \"", block.table(), "\""));
  const size_t rf = static_cast<size_t>(t->row_floats());
  if (block.row_floats() != rf ||
      block.rows().size() != static_cast<size_t>(block.ids_size()) * rf * sizeof(float))
    return absl::InvalidArgumentError(absl::StrCat("table \"", block.table(), "\": rows of ",
                                                   block.row_floats(), " floats, the table's are ",
                                                   rf));
  if (absl::Status s = CheckIds(block.table(), block.ids()); !s.ok()) return s;
  std::vector<float> row(rf);
  for (int i = 0; i < block.ids_size(); ++i) {
    std::memcpy(row.data(), block.rows().data() + i * rf * sizeof(float), rf * sizeof(float));
    t->Restore(block.ids(i), row.data());
  }
  return absl::OkStatus();
}

}  // namespace disttrain::trainer
