#include "operator/runtime/work_queue.h"

#include <thread>

#include "gtest/gtest.h"
#include "operator/runtime/backoff.h"

namespace disttrain::runtime {
namespace {

WorkQueueOptions Manual() {
  WorkQueueOptions o;
  o.start_timer = false;
  o.base_backoff = absl::Seconds(1);
  o.max_backoff = absl::Seconds(10);
  return o;
}

TEST(WorkQueueTest, DeduplicatesKeysWaitingInTheQueue) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
}

TEST(WorkQueueTest, KeepsFirstInFirstOutOrder) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  for (const char* k : {"c", "a", "b"}) q.Add(k);
  EXPECT_EQ(q.Get(), "c");
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
}

TEST(WorkQueueTest, AKeyBeingProcessedIsRequeuedOnlyAfterDone) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");  // while processing
  EXPECT_EQ(q.Len(), 0) << "a second worker must not get the same key";
  q.Done("a");
  EXPECT_EQ(q.Len(), 1);
  EXPECT_EQ(q.Get(), "a");
}

TEST(WorkQueueTest, AnUrgentKeyGoesToTheHeadOnceAndKeepsItsPlaceAfterLaterAdds) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  for (const char* k : {"a", "b", "c"}) q.Add(k);
  q.AddUrgent("c");  // already queued: moves to the head, not queued twice
  q.AddUrgent("d");  // new: queued at the head
  q.Add("d");
  EXPECT_EQ(q.Len(), 4);
  EXPECT_EQ(q.Get(), "d");
  EXPECT_EQ(q.Get(), "c");
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
}

TEST(WorkQueueTest, AnUrgentAddWhileProcessingRequeuesAtTheHeadOnDone) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("b");
  q.AddUrgent("a");
  EXPECT_EQ(q.Len(), 1) << "a second worker must not get the key being processed";
  q.Done("a");
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  q.Done("a");
  q.Add("a");
  q.Done("b");
  q.Add("b");
  EXPECT_EQ(q.Get(), "a") << "the urgency was used up by the first requeue";
}

TEST(WorkQueueTest, DelayedAddsBecomeReadyWhenDue) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  q.AddAfter("late", absl::Seconds(10));
  q.AddAfter("early", absl::Seconds(2));
  EXPECT_EQ(q.ProcessDue(clock.Now()), absl::Seconds(2));
  EXPECT_EQ(q.Len(), 0);
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(q.ProcessDue(clock.Now()), absl::Seconds(8));
  EXPECT_EQ(q.Get(), "early");
  clock.Advance(absl::Seconds(8));
  EXPECT_EQ(q.ProcessDue(clock.Now()), absl::InfiniteDuration());
  EXPECT_EQ(q.Get(), "late");
}

TEST(WorkQueueTest, AnEarlierDelayReplacesALaterOne) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  q.AddAfter("a", absl::Seconds(10));
  q.AddAfter("a", absl::Seconds(1));
  q.AddAfter("a", absl::Seconds(5));
  EXPECT_EQ(q.ProcessDue(clock.Now()), absl::Seconds(1));
}

TEST(WorkQueueTest, ADelayedAddOfAQueuedKeyAddsNoSecondPass) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  q.Add("a");
  q.AddAfter("a", absl::Seconds(1));
  EXPECT_EQ(q.ProcessDue(clock.Now()), absl::InfiniteDuration()) << "nothing was delayed";
  EXPECT_EQ(q.Get(), "a");
  // Being processed and not queued again: a delayed add is a later pass.
  q.AddAfter("a", absl::Seconds(1));
  q.Done("a");
  EXPECT_EQ(q.Len(), 0);
  clock.Advance(absl::Seconds(1));
  q.ProcessDue(clock.Now());
  EXPECT_EQ(q.Get(), "a");
}

TEST(WorkQueueTest, RateLimitedAddsBackOffExponentiallyWithACapAndForgetResets) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  std::vector<absl::Duration> waits;
  for (int i = 0; i < 6; ++i) {
    q.AddRateLimited("a");
    waits.push_back(q.ProcessDue(clock.Now()));
    clock.Advance(waits.back());
    q.ProcessDue(clock.Now());
    ASSERT_EQ(q.Get(), "a");
    q.Done("a");
  }
  EXPECT_EQ(waits,
            (std::vector<absl::Duration>{absl::Seconds(1), absl::Seconds(2), absl::Seconds(4),
                                         absl::Seconds(8), absl::Seconds(10), absl::Seconds(10)}));
  EXPECT_EQ(q.NumRequeues("a"), 6);
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
  q.AddRateLimited("a");
  EXPECT_EQ(q.ProcessDue(clock.Now()), absl::Seconds(1));
}

TEST(WorkQueueTest, ShutDownReleasesBlockedWorkers) {
  FakeClock clock;
  WorkQueue q(Manual(), &clock);
  std::optional<std::string> got = "unset";
  std::thread worker([&] { got = q.Get(); });
  q.ShutDown();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
  q.Add("after");
  EXPECT_EQ(q.Len(), 0);
}

TEST(WorkQueueTest, TheTimerThreadDeliversDelayedKeysOnItsOwn) {
  WorkQueueOptions o;
  o.name = "timer";
  WorkQueue q(o, RealClock::Get());
  const absl::Time start = absl::Now();
  q.AddAfter("k", absl::Milliseconds(200));
  EXPECT_EQ(q.Get(), "k");  // blocks until the timer moves it
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
}

TEST(WorkQueueTest, ReportsControllerRuntimeMetrics) {
  FakeClock clock;
  MetricsRegistry metrics;
  WorkQueueOptions o = Manual();
  o.name = "jobs";
  WorkQueue q(o, &clock, &metrics);
  q.Add("a");
  q.Add("b");
  q.AddRateLimited("c");
  std::string text = metrics.Render();
  EXPECT_NE(text.find("workqueue_depth{name=\"jobs\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_adds_total{name=\"jobs\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_retries_total{name=\"jobs\"} 1"), std::string::npos) << text;
}

TEST(BackoffTest, DoublesToTheCapAndStartsOverAfterReset) {
  Backoff b(absl::Milliseconds(100), absl::Milliseconds(500));
  EXPECT_EQ(b.Next(), absl::Milliseconds(100));
  EXPECT_EQ(b.Next(), absl::Milliseconds(200));
  EXPECT_EQ(b.Next(), absl::Milliseconds(400));
  EXPECT_EQ(b.Next(), absl::Milliseconds(500));
  EXPECT_EQ(b.Next(), absl::Milliseconds(500));
  b.Reset();
  EXPECT_EQ(b.Next(), absl::Milliseconds(100));
}

}  // namespace
}  // namespace disttrain::runtime
