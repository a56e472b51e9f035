// MetricsFetcher over plain HTTP with cpprestsdk: a GET whose answer must come within the
// timeout (a pod whose IP answers nothing, a simulated node's, costs no more). Thread-safe;
// the callback runs on cpprestsdk's thread pool.
#ifndef DISTTRAIN_OPERATOR_PROGRESS_HTTP_METRICS_FETCHER_H_
#define DISTTRAIN_OPERATOR_PROGRESS_HTTP_METRICS_FETCHER_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "operator/progress/progress_tracker.h"

namespace disttrain::progress {

class HttpMetricsFetcher : public MetricsFetcher {
 public:
  explicit HttpMetricsFetcher(absl::Duration timeout = absl::Seconds(2)) : timeout_(timeout) {}

  // Unavailable when nothing answers in time or the answer is not 200; InvalidArgument for a URL
  // that is not one.
  void Fetch(const std::string& url,
             std::function<void(absl::StatusOr<std::string>)> done) override;

 private:
  const absl::Duration timeout_;
};

}  // namespace disttrain::progress

#endif  // DISTTRAIN_OPERATOR_PROGRESS_HTTP_METRICS_FETCHER_H_
