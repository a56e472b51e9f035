#include "trainer/models/sparse_batch.h"

namespace disttrain::trainer {

FeatureLayout FeatureLayout::FromSchema(const Schema& schema) {
  FeatureLayout l;
  for (const embedding::TableConfig& t : schema.tables) {
    l.tables.push_back(t.name);
    l.dims.push_back(t.dim);
  }
  for (const ColumnSpec* c : schema.fields()) {
    Field f;
    f.name = c->name;
    f.pooling = c->pooling;
    for (size_t t = 0; t < l.tables.size(); ++t)
      if (l.tables[t] == c->table) f.table = static_cast<int>(t);
    l.fields.push_back(std::move(f));
  }
  l.dense_width = static_cast<int>(schema.dense_inputs().size());
  return l;
}

void BatchBuilder::Build(const std::vector<Example>& examples, SparseBatch* out) {
  const size_t nf = layout_.fields.size();
  out->n = static_cast<int>(examples.size());
  out->labels.resize(examples.size());
  out->dense.resize(examples.size() * layout_.dense_width);
  out->fields.resize(nf);
  out->table_ids.resize(layout_.tables.size());
  seen_.resize(layout_.tables.size());
  for (auto& ids : out->table_ids) ids.clear();
  for (auto& s : seen_) s.clear();
  for (SparseBatch::Field& f : out->fields) {
    f.offsets.assign(1, 0);
    f.rows.clear();
  }
  for (size_t i = 0; i < examples.size(); ++i) {
    const Example& e = examples[i];
    out->labels[i] = e.label;
    std::copy(e.dense.begin(), e.dense.end(), out->dense.begin() + i * layout_.dense_width);
    uint32_t begin = 0;
    for (size_t f = 0; f < nf; ++f) {
      const int t = layout_.fields[f].table;
      SparseBatch::Field& field = out->fields[f];
      for (uint32_t k = begin; k < e.ends[f]; ++k) {
        auto [it, fresh] =
            seen_[t].try_emplace(e.ids[k], static_cast<uint32_t>(out->table_ids[t].size()));
        if (fresh) out->table_ids[t].push_back(e.ids[k]);
        field.rows.push_back(it->second);
      }
      field.offsets.push_back(static_cast<uint32_t>(field.rows.size()));
      begin = e.ends[f];
    }
  }
}

}  // namespace disttrain::trainer
