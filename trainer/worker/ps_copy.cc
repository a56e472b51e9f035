#include "trainer/worker/ps_copy.h"

#include <algorithm>
#include <utility>

namespace disttrain::trainer {

PsCopy::PsCopy(Pull pull, absl::Duration interval, const Clock* clock, ExportRows export_rows)
    : pull_(std::move(pull)),
      export_rows_(std::move(export_rows)),
      interval_(interval),
      clock_(clock) {}

PsCopy::~PsCopy() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void PsCopy::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

std::optional<PsCopy::Copy> PsCopy::Latest() const {
  std::optional<Copy> copy;
  {
    absl::MutexLock lock(&mu_);
    if (export_rows_ != nullptr && !tables_ready_) return std::nullopt;
    copy = latest_;
  }
  if (copy.has_value() && export_rows_ != nullptr) {
    absl::MutexLock lock(&tables_mu_);
    copy->table_rows = tables_.rows();
  }
  return copy;
}

absl::Status PsCopy::ReadTables(TableRowsFn fn) const {
  absl::MutexLock lock(&tables_mu_);
  return tables_.ForEachTable(fn);
}

int64_t PsCopy::copies() const {
  absl::MutexLock lock(&mu_);
  return copies_;
}

int64_t PsCopy::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

void PsCopy::Loop() {
  Params params;
  while (true) {
    const absl::Time start = clock_->Now();
    absl::StatusOr<int64_t> step = pull_(&params);
    // The rows after the dense variables, only while the servers answer (a pull that failed
    // says one is gone). Merged block by block: a restore may read the rows between blocks.
    absl::Status exported = absl::OkStatus();
    if (step.ok() && export_rows_ != nullptr) {
      exported = export_rows_([this](const v1::RowBlock& block) {
        absl::MutexLock lock(&tables_mu_);
        return tables_.Apply(block);
      });
    }
    const absl::Duration took = clock_->Now() - start;
    {
      absl::MutexLock lock(&mu_);
      if (step.ok() && exported.ok() && export_rows_ != nullptr) tables_ready_ = true;
      if (step.ok()) {
        if (latest_.has_value()) {
          latest_->global_step = *step;
          std::swap(latest_->params, params);  // the old copy's buffers serve the next pull
          latest_->taken = start;
        } else {
          latest_ = Copy{*step, std::move(params), start};
          params = Params();
        }
      }
      if (step.ok() && exported.ok()) {
        ++copies_;
      } else {
        ++failures_;
      }
      const absl::Duration wait = std::max(interval_, 10 * took) - took;
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), std::max(wait, absl::ZeroDuration())))
        return;
    }
  }
}

}  // namespace disttrain::trainer
