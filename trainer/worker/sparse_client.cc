#include "trainer/worker/sparse_client.h"

#include <grpcpp/grpcpp.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "trainer/embedding/id_hash.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/ps/embedding_store.h"
#include "trainer/wire/transport_security.h"
#include "trainer/wire/wire.h"
#include "trainer/worker/ps_client.h"

namespace disttrain::trainer {
namespace {

std::chrono::system_clock::time_point Deadline(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// One SparsePushPull in flight.
struct SparseCall {
  grpc::ClientContext ctx;
  v1::SparsePushPullRequest req;
  v1::SparsePushPullResponse resp;
  grpc::Status status;
  absl::Notification done;
  int ps = 0;
  size_t bytes = 0;
  // For each pull slice of `req`, in order: the entry of the caller's pulls and the positions of
  // its ids there.
  std::vector<std::pair<size_t, std::vector<uint32_t>>> pulls;
};

}  // namespace

SparseClient::SparseClient(const std::vector<std::string>& addresses, std::string worker)
    : worker_(std::move(worker)) {
  for (const std::string& a : addresses) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(8 << 20);
    args.SetMaxSendMessageSize(8 << 20);
    wire::SetTransportArgs(&args);
    // Not the dense path's connections: sparse calls never queue behind a dense stream.
    args.SetInt("disttrain.sparse", 1);
    stubs_.push_back(
        v1::ParameterServer::NewStub(grpc::CreateCustomChannel(a, ChannelCredentials(), args)));
  }
}

SparseClient::~SparseClient() = default;

absl::Status SparseClient::CreateTables(const std::vector<embedding::TableConfig>& tables,
                                        bool reset) {
  v1::CreateTablesRequest req;
  for (const embedding::TableConfig& t : tables) *req.add_tables() = TableSpecOf(t);
  req.set_reset(reset);
  for (int ps = 0; ps < num_ps(); ++ps) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    v1::CreateTablesResponse resp;
    if (absl::Status s = FromGrpc(stubs_[ps]->CreateTables(&ctx, req, &resp),
                                  absl::StrCat("CreateTables on ps ", ps));
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::Status SparseClient::PushPull(const std::vector<TableRows>& push,
                                    std::vector<TableRows>* pull, bool train) {
  const int n = num_ps();
  std::vector<std::unique_ptr<SparseCall>> calls;
  std::vector<SparseCall*> filling(n, nullptr);
  auto call_for = [&](int ps, size_t bytes) {
    SparseCall* c = filling[ps];
    if (c == nullptr || c->bytes + bytes > kMaxCallBytes) {
      calls.push_back(std::make_unique<SparseCall>());
      c = calls.back().get();
      c->ps = ps;
      c->req.set_worker(worker_);
      c->req.set_train(train);
      filling[ps] = c;
    }
    c->bytes += bytes;
    return c;
  };
  // Positions of a table's ids, by server.
  auto group = [n](const std::vector<uint64_t>& ids) {
    std::vector<std::vector<uint32_t>> by_ps(n);
    for (size_t i = 0; i < ids.size(); ++i)
      by_ps[embedding::PsOfId(ids[i], n)].push_back(static_cast<uint32_t>(i));
    return by_ps;
  };
  uint64_t pushed = 0, pulled = 0;
  for (const TableRows& t : push) {
    const size_t row_bytes = 8 + sizeof(float) * t.dim;
    const size_t per_call = std::max<size_t>(1, kMaxCallBytes / row_bytes);
    std::vector<std::vector<uint32_t>> by_ps = group(t.ids);
    for (int ps = 0; ps < n; ++ps) {
      const std::vector<uint32_t>& pos = by_ps[ps];
      for (size_t first = 0; first < pos.size(); first += per_call) {
        const size_t k = std::min(per_call, pos.size() - first);
        v1::SparseRows* rows = call_for(ps, k * row_bytes)->req.add_push();
        rows->set_table(t.table);
        rows->mutable_ids()->Reserve(static_cast<int>(k));
        std::string* values = rows->mutable_values();
        values->resize(k * t.dim * sizeof(float));
        for (size_t j = 0; j < k; ++j) {
          const uint32_t p = pos[first + j];
          rows->add_ids(t.ids[p]);
          std::memcpy(values->data() + j * t.dim * sizeof(float), &t.values[size_t{p} * t.dim],
                      t.dim * sizeof(float));
        }
        pushed += values->size();
      }
    }
  }
  for (size_t ti = 0; ti < pull->size(); ++ti) {
    TableRows& t = (*pull)[ti];
    t.values.resize(t.ids.size() * t.dim);
    const size_t row_bytes = 8 + sizeof(float) * t.dim;
    const size_t per_call = std::max<size_t>(1, kMaxCallBytes / row_bytes);
    std::vector<std::vector<uint32_t>> by_ps = group(t.ids);
    for (int ps = 0; ps < n; ++ps) {
      const std::vector<uint32_t>& pos = by_ps[ps];
      for (size_t first = 0; first < pos.size(); first += per_call) {
        const size_t k = std::min(per_call, pos.size() - first);
        SparseCall* c = call_for(ps, k * row_bytes);
        v1::SparseRows* rows = c->req.add_pull();
        rows->set_table(t.table);
        rows->mutable_ids()->Reserve(static_cast<int>(k));
        std::vector<uint32_t> where(pos.begin() + first, pos.begin() + first + k);
        for (uint32_t p : where) rows->add_ids(t.ids[p]);
        c->pulls.emplace_back(ti, std::move(where));
      }
    }
  }
  for (auto& c : calls) {
    c->ctx.set_deadline(Deadline(60));
    SparseCall* raw = c.get();
    stubs_[c->ps]->async()->SparsePushPull(&c->ctx, &c->req, &c->resp, [raw](grpc::Status s) {
      raw->status = std::move(s);
      raw->done.Notify();
    });
  }
  absl::Status first_error;
  for (auto& c : calls) {
    c->done.WaitForNotification();
    if (!c->status.ok() && first_error.ok())
      first_error = FromGrpc(c->status, absl::StrCat("SparsePushPull on ps ", c->ps));
  }
  if (!first_error.ok()) {
    Metrics().rpc_errors->Add({"sparse_push_pull"}, 1);
    return first_error;
  }
  for (auto& c : calls) {
    if (c->resp.rows_size() != static_cast<int>(c->pulls.size()))
      return absl::InternalError(absl::StrCat("ps ", c->ps, " answered ", c->resp.rows_size(),
                                              " pulls of ", c->pulls.size()));
    for (size_t j = 0; j < c->pulls.size(); ++j) {
      TableRows& t = (*pull)[c->pulls[j].first];
      const std::vector<uint32_t>& where = c->pulls[j].second;
      const std::string& values = c->resp.rows(static_cast<int>(j)).values();
      const size_t row = t.dim * sizeof(float);
      if (values.size() != where.size() * row)
        return absl::InternalError(absl::StrCat("ps ", c->ps, " sent ", values.size(),
                                                " bytes for ", where.size(), " rows of table \"",
                                                t.table, "\""));
      for (size_t k = 0; k < where.size(); ++k)
        std::memcpy(&t.values[size_t{where[k]} * t.dim], values.data() + k * row, row);
      pulled += values.size();
    }
  }
  bytes_pushed_ += pushed;
  bytes_pulled_ += pulled;
  Metrics().sparse_bytes->Add({"pushed"}, static_cast<double>(pushed));
  Metrics().sparse_bytes->Add({"pulled"}, static_cast<double>(pulled));
  return absl::OkStatus();
}

absl::Status SparseClient::Export(const std::string& table, bool full,
                                  absl::FunctionRef<absl::Status(const v1::RowBlock&)> sink,
                                  bool* complete, int deadline_seconds) {
  bool all = true;
  for (int ps = 0; ps < num_ps(); ++ps) {
    v1::ExportRowsRequest req;
    req.set_table(table);
    auto it = exported_.find({table, ps});
    if (!full && it != exported_.end()) {
      req.set_since_version(it->second.first);
      req.set_incarnation(it->second.second);
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(deadline_seconds));
    std::unique_ptr<grpc::ClientReader<v1::RowBlock>> reader = stubs_[ps]->ExportRows(&ctx, req);
    v1::RowBlock block;
    bool first = true;
    std::pair<uint64_t, std::string> reached;
    absl::Status sunk;
    while (reader->Read(&block)) {
      if (first) {
        reached = {block.version(), block.incarnation()};
        all = all && block.full();
        first = false;
      }
      if (sunk.ok()) sunk = sink(block);
      if (!sunk.ok()) ctx.TryCancel();
    }
    grpc::Status st = reader->Finish();
    if (!sunk.ok()) return sunk;
    if (absl::Status s = FromGrpc(st, absl::StrCat("ExportRows of \"", table, "\" from ps ", ps));
        !s.ok())
      return s;
    exported_[{table, ps}] = std::move(reached);
  }
  if (complete != nullptr) *complete = all;
  return absl::OkStatus();
}

struct SparseClient::Import::Stream {
  grpc::ClientContext ctx;
  v1::ImportRowsResponse resp;
  std::unique_ptr<grpc::ClientWriter<v1::RowBlock>> writer;
  v1::RowBlock pending;
  bool broken = false;
};

SparseClient::Import::Import(SparseClient* client) : client_(client) {
  streams_.resize(client->num_ps());
}

SparseClient::Import::~Import() {
  for (auto& s : streams_) {
    if (s != nullptr && s->writer != nullptr) s->ctx.TryCancel();
  }
}

absl::Status SparseClient::Import::Flush(int ps) {
  Stream& s = *streams_[ps];
  if (s.pending.ids_size() == 0) return absl::OkStatus();
  if (!s.broken && !s.writer->Write(s.pending)) s.broken = true;
  s.pending.Clear();
  return s.broken ? absl::UnavailableError(absl::StrCat("ImportRows to ps ", ps, " broke"))
                  : absl::OkStatus();
}

absl::Status SparseClient::Import::Add(const std::string& table, uint32_t row_floats, uint64_t id,
                                       const float* row) {
  const int ps = embedding::PsOfId(id, client_->num_ps());
  if (streams_[ps] == nullptr) {
    streams_[ps] = std::make_unique<Stream>();
    streams_[ps]->ctx.set_deadline(Deadline(600));
    streams_[ps]->writer = client_->stubs_[ps]->ImportRows(&streams_[ps]->ctx, &streams_[ps]->resp);
  }
  Stream& s = *streams_[ps];
  if (s.pending.ids_size() > 0 &&
      (s.pending.table() != table || s.pending.rows().size() >= (1 << 20)))
    if (absl::Status st = Flush(ps); !st.ok()) return st;
  s.pending.set_table(table);
  s.pending.set_row_floats(row_floats);
  s.pending.add_ids(id);
  s.pending.mutable_rows()->append(reinterpret_cast<const char*>(row), row_floats * sizeof(float));
  return absl::OkStatus();
}

absl::Status SparseClient::Import::Finish() {
  absl::Status first;
  for (int ps = 0; ps < static_cast<int>(streams_.size()); ++ps) {
    if (streams_[ps] == nullptr) continue;
    absl::Status flushed = Flush(ps);
    Stream& s = *streams_[ps];
    s.writer->WritesDone();
    absl::Status finished = FromGrpc(s.writer->Finish(), absl::StrCat("ImportRows to ps ", ps));
    s.writer.reset();
    if (first.ok()) first = !finished.ok() ? finished : flushed;
  }
  return first;
}

}  // namespace disttrain::trainer
