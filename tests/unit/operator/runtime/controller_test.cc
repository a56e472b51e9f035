#include "operator/runtime/controller.h"

#include <atomic>
#include <stdexcept>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/runtime/work_queue.h"

namespace disttrain::runtime {
namespace {

using ::testing::HasSubstr;

// Throws for key "bad", succeeds for every other key; counts calls per outcome.
class ThrowingReconciler : public Reconciler {
 public:
  absl::StatusOr<ReconcileResult> Reconcile(const std::string& key) override {
    if (key == "bad") {
      ++throws;
      throw std::runtime_error(
          "[json.exception.type_error.302] type must be string, but is number");
    }
    ++successes;
    if (key == "last") done.Notify();
    return ReconcileResult{};
  }
  std::atomic<int> throws{0}, successes{0};
  absl::Notification done;
};

TEST(ControllerTest, ExportsEveryReconcileCounterAtZeroBeforeTheFirstReconcile) {
  MetricsRegistry metrics;
  FakeClock clock;
  WorkQueue queue({.name = "distributedtraining", .start_timer = false}, &clock, &metrics);
  ThrowingReconciler reconciler;
  Controller controller("distributedtraining", &reconciler, &queue, 1, &metrics);
  const std::string text = metrics.Render();
  for (
      const char* series :
      {R"(controller_runtime_reconcile_total{controller="distributedtraining",result="error"} 0)",
       R"(controller_runtime_reconcile_total{controller="distributedtraining",result="requeue"} 0)",
       R"(controller_runtime_reconcile_total{controller="distributedtraining",result="requeue_after"} 0)",
       R"(controller_runtime_reconcile_total{controller="distributedtraining",result="success"} 0)",
       R"(controller_runtime_reconcile_errors_total{controller="distributedtraining"} 0)",
       R"(controller_runtime_reconcile_panics_total{controller="distributedtraining"} 0)",
       R"(workqueue_depth{name="distributedtraining"} 0)",
       R"(workqueue_adds_total{name="distributedtraining"} 0)",
       R"(workqueue_retries_total{name="distributedtraining"} 0)"}) {
    EXPECT_THAT(text, HasSubstr(series));
  }
}

TEST(ControllerTest, AReconcileThatThrowsIsRetriedAndOtherKeysKeepBeingServed) {
  MetricsRegistry metrics;
  FakeClock clock;
  WorkQueue queue({.name = "q", .start_timer = false}, &clock, &metrics);
  ThrowingReconciler reconciler;
  Controller controller("c", &reconciler, &queue, 1, &metrics);
  queue.Add("bad");
  queue.Add("good");
  queue.Add("last");
  controller.Start();
  ASSERT_TRUE(reconciler.done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  controller.Stop();
  EXPECT_EQ(reconciler.throws.load(), 1);
  EXPECT_EQ(reconciler.successes.load(), 2);
  auto families = metrics.Render();
  EXPECT_THAT(families,
              HasSubstr(R"(controller_runtime_reconcile_panics_total{controller="c"} 1)"));
  EXPECT_THAT(families,
              HasSubstr(R"(controller_runtime_reconcile_total{controller="c",result="error"} 1)"));
  // The throwing key went back through the rate limiter, as any error does.
  EXPECT_THAT(families, HasSubstr(R"(workqueue_retries_total{name="q"} 1)"));
}

}  // namespace
}  // namespace disttrain::runtime
