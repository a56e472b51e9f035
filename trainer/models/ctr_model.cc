#include "trainer/models/ctr_model.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {
namespace {

float Sigmoid(float z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

// Log loss of one example from its logit, computed without overflow.
double LogLossOfLogit(float z, float y) {
  return std::max(z, 0.0f) - z * y + std::log1p(std::exp(-std::fabs(z)));
}

// Calls fn(row, scale) for each id of field `f` in example `i`: scale is what pooling gives each
// row (1/count for the mean, 1 for the sum).
template <typename Fn>
void ForEachPooled(const SparseBatch::Field& field, Pooling pooling, int i, Fn fn) {
  const uint32_t begin = field.offsets[i], end = field.offsets[i + 1];
  if (begin == end) return;
  const float scale = pooling == Pooling::kMean ? 1.0f / static_cast<float>(end - begin) : 1.0f;
  for (uint32_t k = begin; k < end; ++k) fn(field.rows[k], scale);
}

}  // namespace

double LogLoss(const std::vector<float>& p, const std::vector<float>& y) {
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double q = std::clamp<double>(p[i], 1e-7, 1 - 1e-7);
    sum -= y[i] > 0.5f ? std::log(q) : std::log(1 - q);
  }
  return p.empty() ? 0 : sum / static_cast<double>(p.size());
}

absl::StatusOr<std::unique_ptr<CtrModel>> CtrModel::Make(const std::string& name,
                                                         const FeatureLayout& layout,
                                                         std::vector<int> hidden) {
  bool fm = false, deep = false;
  if (name == "lr") {
  } else if (name == "fm") {
    fm = true;
  } else if (name == "deepfm") {
    fm = deep = true;
  } else if (name == "widedeep") {
    deep = true;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown model \"", name, "\" (want lr, fm, deepfm or widedeep)"));
  }
  if (layout.fields.empty() && layout.dense_width == 0)
    return absl::InvalidArgumentError("the schema gives the model no feature");
  if (fm) {
    for (size_t t = 1; t < layout.dims.size(); ++t)
      if (layout.dims[t] != layout.dims[0])
        return absl::InvalidArgumentError(absl::StrCat(
            name, " needs every table to have the same dim: \"", layout.tables[0], "\" has ",
            layout.dims[0], ", \"", layout.tables[t], "\" ", layout.dims[t]));
  }
  return std::unique_ptr<CtrModel>(new CtrModel(name, layout, fm, deep, std::move(hidden)));
}

CtrModel::CtrModel(std::string name, const FeatureLayout& layout, bool fm, bool deep,
                   std::vector<int> hidden)
    : name_(std::move(name)), layout_(layout), fm_(fm), deep_(deep) {
  k_ = layout_.dims.empty() ? 8 : layout_.dims[0];
  for (const FeatureLayout::Field& f : layout_.fields) concat_ += layout_.dims[f.table];
  concat_ += layout_.dense_width;
  int v = 1;
  if (layout_.dense_width > 0) dense_wide_ = v++;
  if (fm_ && layout_.dense_width > 0) dense_emb_ = v++;
  if (deep_) {
    tower_ = std::make_unique<DenseTower>("deep", concat_, std::move(hidden));
    tower_first_ = v;
  }
}

std::vector<VariableSpec> CtrModel::Variables() const {
  std::vector<VariableSpec> v = {{"bias", 1}};
  if (dense_wide_ >= 0) v.push_back({"dense/wide", static_cast<size_t>(layout_.dense_width)});
  if (dense_emb_ >= 0)
    v.push_back({"dense/embedding", static_cast<size_t>(layout_.dense_width) * k_});
  if (tower_) {
    std::vector<VariableSpec> t = tower_->Variables();
    v.insert(v.end(), t.begin(), t.end());
  }
  return v;
}

Params CtrModel::Initialize(uint64_t seed) const {
  std::mt19937_64 rng(seed);
  Params p;
  p.emplace_back(1, 0.0f);
  if (dense_wide_ >= 0) p.emplace_back(layout_.dense_width, 0.0f);
  if (dense_emb_ >= 0) {
    std::uniform_real_distribution<float> dist(-0.02f, 0.02f);
    std::vector<float> e(static_cast<size_t>(layout_.dense_width) * k_);
    for (float& x : e) x = dist(rng);
    p.push_back(std::move(e));
  }
  if (tower_) tower_->Initialize(&rng, &p);
  return p;
}

void CtrModel::Forward(const Params& p, const SparseBatch& b, const BatchRows& rows) {
  const int n = b.n, nd = layout_.dense_width;
  logits_.assign(n, p[0][0]);
  for (size_t f = 0; f < layout_.fields.size(); ++f) {
    const FeatureLayout::Field& lf = layout_.fields[f];
    const std::vector<float>& wide = rows.wide[lf.table];
    for (int i = 0; i < n; ++i)
      ForEachPooled(b.fields[f], lf.pooling, i,
                    [&](uint32_t r, float scale) { logits_[i] += scale * wide[r]; });
  }
  if (dense_wide_ >= 0) {
    const std::vector<float>& w = p[dense_wide_];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < nd; ++j) logits_[i] += w[j] * b.dense[static_cast<size_t>(i) * nd + j];
  }
  if (!uses_embeddings()) return;
  pooled_.assign(static_cast<size_t>(n) * concat_, 0);
  int at = 0;
  for (size_t f = 0; f < layout_.fields.size(); ++f) {
    const FeatureLayout::Field& lf = layout_.fields[f];
    const int d = layout_.dims[lf.table];
    const std::vector<float>& emb = rows.emb[lf.table];
    for (int i = 0; i < n; ++i) {
      float* out = &pooled_[static_cast<size_t>(i) * concat_ + at];
      ForEachPooled(b.fields[f], lf.pooling, i, [&](uint32_t r, float scale) {
        const float* e = &emb[static_cast<size_t>(r) * d];
        for (int k = 0; k < d; ++k) out[k] += scale * e[k];
      });
    }
    at += d;
  }
  for (int i = 0; i < n; ++i)
    std::copy(b.dense.begin() + static_cast<size_t>(i) * nd,
              b.dense.begin() + static_cast<size_t>(i + 1) * nd,
              pooled_.begin() + static_cast<size_t>(i) * concat_ + at);
  if (fm_) {
    const int nf = static_cast<int>(layout_.fields.size());
    fm_sum_.assign(static_cast<size_t>(n) * k_, 0);
    for (int i = 0; i < n; ++i) {
      const float* row = &pooled_[static_cast<size_t>(i) * concat_];
      float* s = &fm_sum_[static_cast<size_t>(i) * k_];
      double squares = 0;
      for (int f = 0; f < nf; ++f) {
        for (int k = 0; k < k_; ++k) {
          const float e = row[f * k_ + k];
          s[k] += e;
          squares += e * e;
        }
      }
      for (int j = 0; j < nd; ++j) {
        const float x = b.dense[static_cast<size_t>(i) * nd + j];
        const float* v = &p[dense_emb_][static_cast<size_t>(j) * k_];
        for (int k = 0; k < k_; ++k) {
          s[k] += x * v[k];
          squares += (x * v[k]) * (x * v[k]);
        }
      }
      double sum_sq = 0;
      for (int k = 0; k < k_; ++k) sum_sq += s[k] * s[k];
      logits_[i] += static_cast<float>(0.5 * (sum_sq - squares));
    }
  }
  if (deep_) {
    std::vector<const std::vector<float>*> tp;
    for (size_t v = tower_first_; v < p.size(); ++v) tp.push_back(&p[v]);
    std::vector<float> deep(n);
    tower_->Forward(tp, pooled_.data(), n, deep.data());
    for (int i = 0; i < n; ++i) logits_[i] += deep[i];
  }
}

float CtrModel::LossAndGradient(const Params& p, const SparseBatch& b, const BatchRows& rows,
                                Params* dense_grads, BatchRows* row_grads) {
  Forward(p, b, rows);
  const int n = b.n, nd = layout_.dense_width;
  *dense_grads = ZerosLike(p);
  row_grads->emb.resize(rows.emb.size());
  row_grads->wide.resize(rows.wide.size());
  for (size_t t = 0; t < rows.emb.size(); ++t) row_grads->emb[t].assign(rows.emb[t].size(), 0);
  for (size_t t = 0; t < rows.wide.size(); ++t) row_grads->wide[t].assign(rows.wide[t].size(), 0);
  std::vector<float> g(n);
  double loss = 0;
  for (int i = 0; i < n; ++i) {
    loss += LogLossOfLogit(logits_[i], b.labels[i]);
    g[i] = (Sigmoid(logits_[i]) - b.labels[i]) / static_cast<float>(n);
  }
  for (int i = 0; i < n; ++i) (*dense_grads)[0][0] += g[i];
  for (size_t f = 0; f < layout_.fields.size(); ++f) {
    const FeatureLayout::Field& lf = layout_.fields[f];
    std::vector<float>& gw = row_grads->wide[lf.table];
    for (int i = 0; i < n; ++i)
      ForEachPooled(b.fields[f], lf.pooling, i,
                    [&](uint32_t r, float scale) { gw[r] += scale * g[i]; });
  }
  if (dense_wide_ >= 0) {
    std::vector<float>& gw = (*dense_grads)[dense_wide_];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < nd; ++j) gw[j] += g[i] * b.dense[static_cast<size_t>(i) * nd + j];
  }
  if (!uses_embeddings()) return static_cast<float>(loss / std::max(1, n));
  // d(loss)/d(pooled inputs): the interactions' part, then the MLP's.
  std::vector<float> dpooled(static_cast<size_t>(n) * concat_, 0);
  if (fm_) {
    const int nf = static_cast<int>(layout_.fields.size());
    for (int i = 0; i < n; ++i) {
      const float* row = &pooled_[static_cast<size_t>(i) * concat_];
      const float* s = &fm_sum_[static_cast<size_t>(i) * k_];
      float* d = &dpooled[static_cast<size_t>(i) * concat_];
      for (int f = 0; f < nf; ++f)
        for (int k = 0; k < k_; ++k) d[f * k_ + k] = g[i] * (s[k] - row[f * k_ + k]);
      for (int j = 0; j < nd; ++j) {
        const float x = b.dense[static_cast<size_t>(i) * nd + j];
        const float* v = &p[dense_emb_][static_cast<size_t>(j) * k_];
        float* gv = &(*dense_grads)[dense_emb_][static_cast<size_t>(j) * k_];
        for (int k = 0; k < k_; ++k) gv[k] += g[i] * x * (s[k] - x * v[k]);
      }
    }
  }
  if (deep_) {
    std::vector<const std::vector<float>*> tp;
    std::vector<std::vector<float>*> tg;
    for (size_t v = tower_first_; v < p.size(); ++v) {
      tp.push_back(&p[v]);
      tg.push_back(&(*dense_grads)[v]);
    }
    std::vector<float> dx(static_cast<size_t>(n) * concat_);
    tower_->Backward(tp, pooled_.data(), g.data(), n, tg, dx.data());
    for (size_t i = 0; i < dx.size(); ++i) dpooled[i] += dx[i];
  }
  int at = 0;
  for (size_t f = 0; f < layout_.fields.size(); ++f) {
    const FeatureLayout::Field& lf = layout_.fields[f];
    const int d = layout_.dims[lf.table];
    std::vector<float>& ge = row_grads->emb[lf.table];
    for (int i = 0; i < n; ++i) {
      const float* dp = &dpooled[static_cast<size_t>(i) * concat_ + at];
      ForEachPooled(b.fields[f], lf.pooling, i, [&](uint32_t r, float scale) {
        float* out = &ge[static_cast<size_t>(r) * d];
        for (int k = 0; k < d; ++k) out[k] += scale * dp[k];
      });
    }
    at += d;
  }
  return static_cast<float>(loss / std::max(1, n));
}

void CtrModel::Predict(const Params& p, const SparseBatch& b, const BatchRows& rows,
                       std::vector<float>* probabilities) {
  Forward(p, b, rows);
  probabilities->resize(b.n);
  for (int i = 0; i < b.n; ++i) (*probabilities)[i] = Sigmoid(logits_[i]);
}

}  // namespace disttrain::trainer
