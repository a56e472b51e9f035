#include "operator/progress/progress_tracker.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace disttrain::progress {
namespace {

// Answers each URL with what the test set, at once (on the caller's thread); counts the GETs.
class FakeFetcher : public MetricsFetcher {
 public:
  void Fetch(const std::string& url,
             std::function<void(absl::StatusOr<std::string>)> done) override {
    ++gets[url];
    if (held) {
      pending.push_back([this, url, done] { done(answers.count(url) ? answers[url] : Down()); });
      return;
    }
    done(answers.count(url) ? answers[url] : Down());
  }
  static absl::StatusOr<std::string> Down() { return absl::UnavailableError("connection refused"); }
  void Release() {
    auto p = std::move(pending);
    pending.clear();
    for (auto& f : p) f();
  }
  std::map<std::string, absl::StatusOr<std::string>> answers;
  std::map<std::string, int> gets;
  bool held = false;  // answers wait for Release()
  std::vector<std::function<void()>> pending;
};

std::string Page(int64_t step, int64_t target = 1000) {
  return absl::StrCat("disttrain_trainer_global_step ", step, "\ndisttrain_trainer_target_steps ",
                      target, "\ndisttrain_trainer_examples_per_global_step 32\n");
}

const ScrapeTarget kChief{"uid-1", "http://10.0.0.1:9095/metrics"};

class ProgressTrackerTest : public ::testing::Test {
 protected:
  ProgressTracker Tracker(ProgressSettings s = {.interval = absl::Seconds(30),
                                                .readings_per_second = 10}) {
    return ProgressTracker(&fetcher, &clock, s, &metrics);
  }
  FakeFetcher fetcher;
  FakeClock clock;
  MetricsRegistry metrics;
};

TEST_F(ProgressTrackerTest, ReadsAJobOncePerIntervalAndTellsWhenItsProgressChanged) {
  ProgressTracker t = Tracker();
  std::vector<std::string> told;
  t.SetNotify([&](const std::string& job) { told.push_back(job); });
  fetcher.answers[kChief.url] = Page(100);
  t.Track("ns/a", kChief);
  t.Tick();
  ASSERT_EQ(told, std::vector<std::string>{"ns/a"});
  EXPECT_EQ(t.Latest("ns/a")->global_step, 100);
  EXPECT_EQ(t.Latest("ns/a")->Percent(), 10);

  fetcher.answers[kChief.url] = Page(400);
  clock.Advance(absl::Seconds(10));
  t.Tick();
  EXPECT_EQ(fetcher.gets[kChief.url], 1) << "not due before the interval";
  clock.Advance(absl::Seconds(20));
  t.Tick();
  EXPECT_EQ(fetcher.gets[kChief.url], 2);
  EXPECT_EQ(told.size(), 2u);
  std::optional<api::JobProgress> p = t.Latest("ns/a");
  EXPECT_DOUBLE_EQ(*p->steps_per_second, 10);
  EXPECT_DOUBLE_EQ(*p->examples_per_second, 320);
  EXPECT_EQ(*p->estimated_completion_time, clock.Now() + absl::Seconds(60));

  clock.Advance(absl::Seconds(30));
  t.Tick();  // the same page: the step did not move, so the rate is 0 now: changed
  clock.Advance(absl::Seconds(30));
  t.Tick();  // the same again: nothing new to tell
  EXPECT_EQ(fetcher.gets[kChief.url], 4);
  EXPECT_EQ(told.size(), 3u);
  EXPECT_EQ(metrics.Counter("disttrain_progress_readings_total", "", {"result"})->Value({"ok"}), 4);
}

TEST_F(ProgressTrackerTest, AllJobsTogetherStayWithinTheRate) {
  ProgressTracker t = Tracker({.interval = absl::Seconds(1), .readings_per_second = 2});
  for (int i = 0; i < 10; ++i) {
    ScrapeTarget target{absl::StrCat("uid-", i),
                        absl::StrCat("http://10.0.0.", i, ":9095/metrics")};
    fetcher.answers[target.url] = Page(i);
    t.Track(absl::StrCat("ns/job-", i), target);
  }
  int total = 0;
  for (int s = 0; s < 10; ++s) {
    t.Tick();
    clock.Advance(absl::Seconds(1));
  }
  for (const auto& [url, n] : fetcher.gets) total += n;
  EXPECT_LE(total, 2 + 2 * 9) << "a burst of 2, then 2 a second";
  EXPECT_GE(total, 18);
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(t.Latest(absl::StrCat("ns/job-", i)).has_value())
        << "every job gets its turn: " << i;
  }
}

TEST_F(ProgressTrackerTest, ATargetThatFailsIsReadAgainAfterADoublingBackoff) {
  ProgressTracker t = Tracker();
  t.Track("ns/a", kChief);
  std::vector<int> gets_at;
  for (int s = 0; s <= 30 * 11; ++s) {
    t.Tick();
    gets_at.push_back(fetcher.gets[kChief.url]);
    clock.Advance(absl::Seconds(1));
  }
  // At 0 s, then 30 s later, 60 s after that, then 120 s, and 120 s at most: 0, 30, 90, 210, 330.
  EXPECT_EQ(gets_at[0], 1);
  EXPECT_EQ(gets_at[29], 1);
  EXPECT_EQ(gets_at[30], 2);
  EXPECT_EQ(gets_at[89], 2);
  EXPECT_EQ(gets_at[90], 3);
  EXPECT_EQ(gets_at[209], 3);
  EXPECT_EQ(gets_at[210], 4);
  EXPECT_EQ(gets_at[329], 4);
  EXPECT_EQ(gets_at[330], 5);
  EXPECT_FALSE(t.Latest("ns/a").has_value());
  EXPECT_EQ(
      metrics.Counter("disttrain_progress_readings_total", "", {"result"})->Value({"unreachable"}),
      5);
  fetcher.answers[kChief.url] = std::string("up 1\n");
  t.Track("ns/a", ScrapeTarget{"uid-2", kChief.url});  // a new chief pod: read at once
  t.Tick();
  EXPECT_EQ(fetcher.gets[kChief.url], 6);
  EXPECT_EQ(
      metrics.Counter("disttrain_progress_readings_total", "", {"result"})->Value({"no_step"}), 1);
}

TEST_F(ProgressTrackerTest, StoppedOrForgottenJobsAreNotReadAndKeepOrLoseTheirProgress) {
  ProgressTracker t = Tracker();
  fetcher.answers[kChief.url] = Page(100);
  t.Track("ns/a", kChief);
  t.Tick();
  t.Track("ns/a", std::nullopt);  // it ended
  clock.Advance(absl::Minutes(5));
  t.Tick();
  EXPECT_EQ(fetcher.gets[kChief.url], 1);
  EXPECT_EQ(t.Latest("ns/a")->global_step, 100) << "kept for the final status";
  t.Forget("ns/a");
  EXPECT_FALSE(t.Latest("ns/a").has_value());
  t.Track("ns/b", std::nullopt);
  EXPECT_FALSE(t.Latest("ns/b").has_value());
}

TEST_F(ProgressTrackerTest, AnAnswerForAPodNoLongerReadIsDropped) {
  ProgressTracker t = Tracker();
  fetcher.held = true;
  fetcher.answers[kChief.url] = Page(100);
  t.Track("ns/a", kChief);
  t.Tick();
  t.Track("ns/a", ScrapeTarget{"uid-2", "http://10.0.0.2:9095/metrics"});  // the chief restarted
  fetcher.Release();
  EXPECT_FALSE(t.Latest("ns/a").has_value());
  t.Tick();  // the new pod is due at once
  EXPECT_EQ(fetcher.gets["http://10.0.0.2:9095/metrics"], 1);
  t.Forget("ns/a");
  fetcher.Release();  // its answer comes after the job is gone
  EXPECT_FALSE(t.Latest("ns/a").has_value());
}

TEST_F(ProgressTrackerTest, StartReadsOnItsOwnThreadAndStopWaitsForIt) {
  ProgressTracker t = Tracker();
  absl::Notification told;
  t.SetNotify([&](const std::string&) {
    if (!told.HasBeenNotified()) told.Notify();
  });
  fetcher.answers[kChief.url] = Page(5);
  t.Track("ns/a", kChief);
  t.Start();
  EXPECT_TRUE(told.WaitForNotificationWithTimeout(absl::Seconds(10)));
  t.Stop();
  EXPECT_EQ(t.Latest("ns/a")->global_step, 5);
}

}  // namespace
}  // namespace disttrain::progress
