#include "operator/kube/in_flight_limit.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace disttrain::kube {
namespace {

TEST(InFlightLimitTest, TakesUpToTheLimitAndWaitsForARelease) {
  InFlightLimit limit(2);
  limit.Acquire();
  EXPECT_TRUE(limit.TryAcquire());
  EXPECT_FALSE(limit.TryAcquire()) << "both slots are taken";
  absl::Notification acquired;
  std::thread waiter([&] {
    limit.Acquire();
    acquired.Notify();
  });
  // Bounded: a limit that never counts its waiter fails here instead of hanging the suite.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (limit.waiting() == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  if (limit.waiting() != 1) {
    limit.Release();  // frees the waiter, so the thread can be joined
    waiter.join();
    FAIL() << "the waiter never waited";
  }
  EXPECT_FALSE(acquired.HasBeenNotified());
  limit.Release();
  // The freed slot is the waiter's: a holder trying for more is refused while anyone waits.
  while (!acquired.WaitForNotificationWithTimeout(absl::Milliseconds(1))) {
    if (absl::Now() > give_up + absl::Seconds(10)) {
      ADD_FAILURE() << "the released slot never reached the waiter";
      limit.Release();  // a second slot: the waiter ends and the thread can be joined
      break;
    }
    if (limit.TryAcquire()) {
      ADD_FAILURE() << "TryAcquire took the slot a waiter was waiting for";
      limit.Release();
    }
  }
  waiter.join();
  if (::testing::Test::HasFailure()) return;
  EXPECT_EQ(limit.in_flight(), 2);
  limit.Release();
  limit.Release();
  EXPECT_EQ(limit.in_flight(), 0);
}

TEST(InFlightLimitTest, ZeroMeansNoBound) {
  InFlightLimit limit(0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(limit.TryAcquire());
  limit.Acquire();
  EXPECT_EQ(limit.in_flight(), 101);
}

}  // namespace
}  // namespace disttrain::kube
