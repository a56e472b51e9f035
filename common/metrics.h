// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
// text exposition format. Metric names follow controller-runtime's where one exists, so
// existing dashboards work. Thread-safe.
#ifndef DISTTRAIN_COMMON_METRICS_H_
#define DISTTRAIN_COMMON_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace disttrain {

using LabelValues = std::vector<std::string>;

class MetricFamily {
 public:
  enum class Kind { kCounter, kGauge, kHistogram };
  MetricFamily(std::string name, std::string help, Kind kind, std::vector<std::string> labels,
               std::vector<double> buckets);

  // Counter and gauge.
  void Add(const LabelValues& labels, double delta);
  void Set(const LabelValues& labels, double value);
  double Value(const LabelValues& labels) const;
  // Histogram.
  void Observe(const LabelValues& labels, double value);
  uint64_t Count(const LabelValues& labels) const;

  // Counter and gauge: every series whose first label values are `prefix` replaced by
  // `series` (each full label values and value), in one step, so a scrape sees the old set or
  // the new one. An empty `series` removes them: what a per-object family does when its object
  // goes.
  void ReplaceSeries(const LabelValues& prefix,
                     const std::vector<std::pair<LabelValues, double>>& series);

  void Render(std::string* out) const;

 private:
  struct Series {
    double value = 0;
    std::vector<uint64_t> bucket_counts;
    double sum = 0;
    uint64_t count = 0;
  };
  std::string LabelText(const LabelValues& values, const std::string& extra = "") const;

  const std::string name_;
  const std::string help_;
  const Kind kind_;
  const std::vector<std::string> labels_;
  const std::vector<double> buckets_;
  mutable absl::Mutex mu_;
  std::map<LabelValues, Series> series_ ABSL_GUARDED_BY(mu_);
};

class MetricsRegistry {
 public:
  MetricFamily* Counter(const std::string& name, const std::string& help,
                        std::vector<std::string> labels = {});
  MetricFamily* Gauge(const std::string& name, const std::string& help,
                      std::vector<std::string> labels = {});
  MetricFamily* Histogram(const std::string& name, const std::string& help,
                          std::vector<std::string> labels, std::vector<double> buckets);
  // Every family whose name starts with `prefix`, sorted by name, in the Prometheus text format.
  std::string Render(const std::string& prefix = "") const;

  static std::vector<double> DurationBuckets();  // seconds, 1 ms .. 60 s

 private:
  MetricFamily* Get(const std::string& name, const std::string& help, MetricFamily::Kind kind,
                    std::vector<std::string> labels, std::vector<double> buckets);
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<MetricFamily>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_METRICS_H_
