// The chief's in-memory copy of the servers (ps_copy.h), with a pull function in place of the
// servers: what it keeps, what a failed pull leaves, and how it paces its pulls.
#include "trainer/worker/ps_copy.h"

#include <atomic>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

// Polls `done` for up to 10 s.
template <typename F>
bool Eventually(F done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(PsCopyTest, KeepsTheNewestPullAndItsStepAndTime) {
  FakeClock clock;
  std::atomic<int64_t> step = 0;
  PsCopy copy(
      [&](Params* p) -> absl::StatusOr<int64_t> {
        const int64_t s = ++step;
        *p = {{static_cast<float>(s), 2.0f * s}};
        return s;
      },
      absl::Milliseconds(1), &clock);
  EXPECT_FALSE(copy.Latest().has_value()) << "nothing before Start";
  copy.Start();
  copy.Start();  // a second call does nothing
  ASSERT_TRUE(Eventually([&] { return copy.copies() >= 3; }));
  std::optional<PsCopy::Copy> c = copy.Latest();
  ASSERT_TRUE(c.has_value());
  EXPECT_GE(c->global_step, 3);
  ASSERT_EQ(c->params.size(), 1u);
  EXPECT_EQ(c->params[0], (std::vector<float>{static_cast<float>(c->global_step),
                                              2.0f * static_cast<float>(c->global_step)}))
      << "the values and the step of one pull";
  EXPECT_EQ(c->taken, clock.Now());
}

TEST(PsCopyTest, AFailedPullKeepsTheLastGoodCopy) {
  std::atomic<int> calls = 0;
  PsCopy copy(
      [&](Params* p) -> absl::StatusOr<int64_t> {
        if (++calls > 1) return absl::UnavailableError("ps-1 is gone");
        *p = {{7.0f}};
        return 7;
      },
      absl::Milliseconds(1));
  copy.Start();
  ASSERT_TRUE(Eventually([&] { return copy.failures() >= 3; }));
  std::optional<PsCopy::Copy> c = copy.Latest();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->global_step, 7);
  EXPECT_EQ(c->params, (Params{{7.0f}}));
  EXPECT_EQ(copy.copies(), 1);
}

TEST(PsCopyTest, ASlowPullSpacesTheNextToTenTimesItsDuration) {
  // Each pull takes 30 ms (on the injected clock) against an interval of 1 ms: the next starts
  // 300 ms after the last one started, so in 0.5 s there are at most 2 or 3, not hundreds.
  FakeClock clock;
  std::atomic<int> calls = 0;
  PsCopy copy(
      [&](Params* p) -> absl::StatusOr<int64_t> {
        clock.Advance(absl::Milliseconds(30));
        *p = {{1.0f}};
        return ++calls;
      },
      absl::Milliseconds(1), &clock);
  copy.Start();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_GE(calls.load(), 1);
  EXPECT_LE(calls.load(), 3);
}

TEST(PsCopyTest, StopsPromptlyWhenDestroyedMidWait) {
  auto copy = std::make_unique<PsCopy>(
      [](Params* p) -> absl::StatusOr<int64_t> {
        *p = {};
        return 1;
      },
      absl::Hours(1));
  copy->Start();
  ASSERT_TRUE(Eventually([&] { return copy->copies() == 1; }));
  const absl::Time start = absl::Now();
  copy.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "the hour's wait is cut short";
}

}  // namespace
}  // namespace disttrain::trainer
