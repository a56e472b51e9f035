#include "trainer/worker/table_copy.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {

absl::Status TableCopy::Apply(const v1::RowBlock& block) {
  const size_t n = static_cast<size_t>(block.ids_size());
  const size_t rf = block.row_floats();
  if (n == 0) return absl::OkStatus();  // an export of a table without (changed) rows
  if (rf == 0 || block.rows().size() != n * rf * sizeof(float))
    return absl::InvalidArgumentError(absl::StrCat("table \"", block.table(), "\": ", n,
                                                   " rows of ", rf, " floats in ",
                                                   block.rows().size(), " bytes"));
  Table& t = tables_[block.table()];
  if (t.row_floats == 0) t.row_floats = static_cast<uint32_t>(rf);
  if (t.row_floats != rf)
    return absl::InvalidArgumentError(absl::StrCat("table \"", block.table(), "\": rows of ", rf,
                                                   " floats, the copy's are ", t.row_floats));
  const char* src = block.rows().data();
  for (size_t i = 0; i < n; ++i, src += rf * sizeof(float)) {
    const uint64_t id = block.ids(static_cast<int>(i));
    uint32_t slot = t.index.Find(id);
    if (slot == embedding::FlatIndex::kAbsent) {
      slot = static_cast<uint32_t>(t.ids.size());
      t.index.Insert(id, slot);
      t.ids.push_back(id);
      t.rows.resize(t.rows.size() + rf);
    }
    std::memcpy(&t.rows[slot * rf], src, rf * sizeof(float));
  }
  return absl::OkStatus();
}

absl::Status TableCopy::ForEachTable(TableRowsFn fn) const {
  for (const auto& [name, t] : tables_) {
    if (t.ids.empty()) continue;
    if (absl::Status s = fn(name, t.row_floats, t.ids, t.rows); !s.ok()) return s;
  }
  return absl::OkStatus();
}

uint64_t TableCopy::rows() const {
  uint64_t n = 0;
  for (const auto& [name, t] : tables_) n += t.ids.size();
  return n;
}

size_t TableCopy::MemoryBytes() const {
  size_t bytes = 0;
  for (const auto& [name, t] : tables_)
    bytes += t.index.MemoryBytes() + t.ids.capacity() * sizeof(uint64_t) +
             t.rows.capacity() * sizeof(float);
  return bytes;
}

}  // namespace disttrain::trainer
