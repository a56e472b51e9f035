#include "common/metrics.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace disttrain {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrCat(static_cast<int64_t>(v));
  return absl::StrCat(v);
}

}  // namespace

MetricFamily::MetricFamily(std::string name, std::string help, Kind kind,
                           std::vector<std::string> labels, std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      kind_(kind),
      labels_(std::move(labels)),
      buckets_(std::move(buckets)) {}

void MetricFamily::Add(const LabelValues& labels, double delta) {
  absl::MutexLock lock(&mu_);
  series_[labels].value += delta;
}

void MetricFamily::Set(const LabelValues& labels, double value) {
  absl::MutexLock lock(&mu_);
  series_[labels].value = value;
}

void MetricFamily::ReplaceSeries(const LabelValues& prefix,
                                 const std::vector<std::pair<LabelValues, double>>& series) {
  absl::MutexLock lock(&mu_);
  for (auto it = series_.lower_bound(prefix); it != series_.end();) {
    if (it->first.size() < prefix.size() ||
        !std::equal(prefix.begin(), prefix.end(), it->first.begin())) {
      break;
    }
    it = series_.erase(it);
  }
  for (const auto& [labels, value] : series) series_[labels].value = value;
}

double MetricFamily::Value(const LabelValues& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.value;
}

void MetricFamily::Observe(const LabelValues& labels, double value) {
  absl::MutexLock lock(&mu_);
  Series& s = series_[labels];
  if (s.bucket_counts.empty()) s.bucket_counts.assign(buckets_.size(), 0);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (value <= buckets_[i]) ++s.bucket_counts[i];
  }
  s.sum += value;
  ++s.count;
}

uint64_t MetricFamily::Count(const LabelValues& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

std::string MetricFamily::LabelText(const LabelValues& values, const std::string& extra) const {
  std::string out;
  for (size_t i = 0; i < labels_.size() && i < values.size(); ++i) {
    absl::StrAppend(&out, out.empty() ? "" : ",", labels_[i], "=\"", Escape(values[i]), "\"");
  }
  if (!extra.empty()) absl::StrAppend(&out, out.empty() ? "" : ",", extra);
  return out.empty() ? "" : absl::StrCat("{", out, "}");
}

void MetricFamily::Render(std::string* out) const {
  const char* type = kind_ == Kind::kCounter ? "counter"
                     : kind_ == Kind::kGauge ? "gauge"
                                             : "histogram";
  absl::StrAppend(out, "# HELP ", name_, " ", help_, "\n# TYPE ", name_, " ", type, "\n");
  absl::MutexLock lock(&mu_);
  if (series_.empty() && labels_.empty() && kind_ != Kind::kHistogram) {
    absl::StrAppend(out, name_, " 0\n");
    return;
  }
  for (const auto& [labels, s] : series_) {
    if (kind_ != Kind::kHistogram) {
      absl::StrAppend(out, name_, LabelText(labels), " ", Number(s.value), "\n");
      continue;
    }
    for (size_t i = 0; i < buckets_.size(); ++i) {
      absl::StrAppend(out, name_, "_bucket",
                      LabelText(labels, absl::StrCat("le=\"", Number(buckets_[i]), "\"")), " ",
                      s.bucket_counts.empty() ? 0 : s.bucket_counts[i], "\n");
    }
    absl::StrAppend(out, name_, "_bucket", LabelText(labels, "le=\"+Inf\""), " ", s.count, "\n");
    absl::StrAppend(out, name_, "_sum", LabelText(labels), " ", Number(s.sum), "\n");
    absl::StrAppend(out, name_, "_count", LabelText(labels), " ", s.count, "\n");
  }
}

MetricFamily* MetricsRegistry::Get(const std::string& name, const std::string& help,
                                   MetricFamily::Kind kind, std::vector<std::string> labels,
                                   std::vector<double> buckets) {
  absl::MutexLock lock(&mu_);
  auto& slot = families_[name];
  if (!slot)
    slot = std::make_unique<MetricFamily>(name, help, kind, std::move(labels), std::move(buckets));
  return slot.get();
}

MetricFamily* MetricsRegistry::Counter(const std::string& name, const std::string& help,
                                       std::vector<std::string> labels) {
  return Get(name, help, MetricFamily::Kind::kCounter, std::move(labels), {});
}

MetricFamily* MetricsRegistry::Gauge(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels) {
  return Get(name, help, MetricFamily::Kind::kGauge, std::move(labels), {});
}

MetricFamily* MetricsRegistry::Histogram(const std::string& name, const std::string& help,
                                         std::vector<std::string> labels,
                                         std::vector<double> buckets) {
  return Get(name, help, MetricFamily::Kind::kHistogram, std::move(labels), std::move(buckets));
}

std::string MetricsRegistry::Render(const std::string& prefix) const {
  std::string out;
  absl::MutexLock lock(&mu_);
  for (const auto& [name, family] : families_) {
    if (name.compare(0, prefix.size(), prefix) == 0) family->Render(&out);
  }
  return out;
}

std::vector<double> MetricsRegistry::DurationBuckets() {
  return {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

}  // namespace disttrain
