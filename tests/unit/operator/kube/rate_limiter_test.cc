#include "operator/kube/rate_limiter.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace disttrain::kube {
namespace {

TEST(RateLimiterTest, AllowsABurstThenPacesAtQps) {
  RateLimiter limiter(10, 3);
  absl::Time t = absl::FromUnixSeconds(1000);
  EXPECT_EQ(limiter.Reserve(t), absl::ZeroDuration());
  EXPECT_EQ(limiter.Reserve(t), absl::ZeroDuration());
  EXPECT_EQ(limiter.Reserve(t), absl::ZeroDuration());
  EXPECT_EQ(limiter.Reserve(t), absl::Milliseconds(100));
  EXPECT_EQ(limiter.Reserve(t), absl::Milliseconds(200));
  EXPECT_EQ(limiter.Reserve(t + absl::Seconds(1)), absl::ZeroDuration());
}

}  // namespace
}  // namespace disttrain::kube
