#include "operator/progress/http_metrics_fetcher.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/http_server.h"
#include "gtest/gtest.h"

namespace disttrain::progress {
namespace {

absl::StatusOr<std::string> Get(HttpMetricsFetcher& fetcher, const std::string& url) {
  absl::Notification done;
  absl::StatusOr<std::string> out = absl::UnknownError("no answer");
  fetcher.Fetch(url, [&](absl::StatusOr<std::string> body) {
    out = std::move(body);
    done.Notify();
  });
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  return out;
}

TEST(HttpMetricsFetcherTest, ReadsAMetricsPage) {
  HttpServer server;
  server.Handle("/metrics",
                [] { return HttpResponse{.body = "disttrain_trainer_global_step 3\n"}; });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  HttpMetricsFetcher fetcher;
  absl::StatusOr<std::string> body =
      Get(fetcher, absl::StrCat("http://127.0.0.1:", server.port(), "/metrics"));
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, "disttrain_trainer_global_step 3\n");
}

TEST(HttpMetricsFetcherTest, NoPageOrNoServerIsUnavailable) {
  HttpServer server;
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  const int port = server.port();
  HttpMetricsFetcher fetcher(absl::Seconds(5));
  absl::StatusOr<std::string> missing =
      Get(fetcher, absl::StrCat("http://127.0.0.1:", port, "/metrics"));
  EXPECT_TRUE(absl::IsUnavailable(missing.status())) << missing.status();
  EXPECT_NE(missing.status().message().find("HTTP 404"), std::string::npos) << missing.status();
  server.Stop();
  absl::StatusOr<std::string> closed =
      Get(fetcher, absl::StrCat("http://127.0.0.1:", port, "/metrics"));
  EXPECT_TRUE(absl::IsUnavailable(closed.status())) << closed.status();
}

TEST(HttpMetricsFetcherTest, ABadUrlIsInvalid) {
  HttpMetricsFetcher fetcher;
  absl::StatusOr<std::string> bad = Get(fetcher, "http://10.0.0.1 9095/metrics");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
}

}  // namespace
}  // namespace disttrain::progress
