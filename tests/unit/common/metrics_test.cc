// Tests common/metrics.cc: what Prometheus scrapes from the registry.
#include "common/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace disttrain {
namespace {

TEST(MetricsTest, CounterRendersHelpTypeAndEscapedLabels) {
  MetricsRegistry registry;
  MetricFamily* c = registry.Counter("jobs_total", "Jobs seen.", {"namespace", "reason"});
  c->Add({"team-a", "say \"hi\"\nthen\\go"}, 2);
  c->Add({"team-a", "say \"hi\"\nthen\\go"}, 1.5);
  EXPECT_DOUBLE_EQ(c->Value({"team-a", "say \"hi\"\nthen\\go"}), 3.5);
  EXPECT_EQ(registry.Render(),
            "# HELP jobs_total Jobs seen.\n# TYPE jobs_total counter\n"
            "jobs_total{namespace=\"team-a\",reason=\"say \\\"hi\\\"\\nthen\\\\go\"} 3.5\n");
}

TEST(MetricsTest, AnUnlabelledFamilyWithNoSampleReadsZero) {
  MetricsRegistry registry;
  registry.Gauge("leader", "1 while leading.");
  registry.Counter("errors_total", "Errors.", {"kind"});
  EXPECT_EQ(registry.Render(),
            "# HELP errors_total Errors.\n# TYPE errors_total counter\n"
            "# HELP leader 1 while leading.\n# TYPE leader gauge\nleader 0\n");
}

TEST(MetricsTest, GaugeKeepsTheLastValueAndWritesWholeNumbersWithoutAFraction) {
  MetricsRegistry registry;
  MetricFamily* g = registry.Gauge("depth", "Queue depth.");
  g->Set({}, 7.25);
  g->Set({}, 12);
  EXPECT_EQ(registry.Render(), "# HELP depth Queue depth.\n# TYPE depth gauge\ndepth 12\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry registry;
  MetricFamily* h = registry.Histogram("reconcile_seconds", "Time.", {"controller"}, {0.1, 1});
  for (double v : {0.05, 0.1, 0.5, 3.0}) h->Observe({"dt"}, v);
  EXPECT_EQ(h->Count({"dt"}), 4u);
  EXPECT_EQ(h->Count({"other"}), 0u);
  EXPECT_EQ(registry.Render(),
            "# HELP reconcile_seconds Time.\n# TYPE reconcile_seconds histogram\n"
            "reconcile_seconds_bucket{controller=\"dt\",le=\"0.1\"} 2\n"
            "reconcile_seconds_bucket{controller=\"dt\",le=\"1\"} 3\n"
            "reconcile_seconds_bucket{controller=\"dt\",le=\"+Inf\"} 4\n"
            "reconcile_seconds_sum{controller=\"dt\"} 3.65\n"
            "reconcile_seconds_count{controller=\"dt\"} 4\n");
}

TEST(MetricsTest, TheSameNameGivesTheSameFamilyAndRenderFiltersByPrefix) {
  MetricsRegistry registry;
  MetricFamily* a = registry.Counter("disttrain_a_total", "A.");
  EXPECT_EQ(registry.Counter("disttrain_a_total", "A again."), a);
  a->Add({}, 1);
  registry.Counter("workqueue_adds_total", "Adds.")->Add({}, 4);
  EXPECT_EQ(registry.Render("disttrain_"),
            "# HELP disttrain_a_total A.\n# TYPE disttrain_a_total counter\n"
            "disttrain_a_total 1\n");
  const std::string all = registry.Render();
  EXPECT_LT(all.find("disttrain_a_total 1"), all.find("workqueue_adds_total 4")) << all;
}

TEST(MetricsTest, ReplaceSeriesSwapsOnlyTheSeriesUnderItsPrefix) {
  MetricsRegistry registry;
  MetricFamily* g = registry.Gauge("pods", "Pods.", {"ns", "job", "role"});
  g->Set({"a", "j", "ps"}, 2);
  g->Set({"a", "j", "worker"}, 3);
  g->Set({"a", "j2", "ps"}, 1);  // shares "a" and a prefix of "j": stays
  g->Set({"b", "j", "ps"}, 4);
  g->ReplaceSeries({"a", "j"}, {{{"a", "j", "chief"}, 1}});
  EXPECT_EQ(registry.Render(),
            "# HELP pods Pods.\n# TYPE pods gauge\n"
            "pods{ns=\"a\",job=\"j\",role=\"chief\"} 1\n"
            "pods{ns=\"a\",job=\"j2\",role=\"ps\"} 1\n"
            "pods{ns=\"b\",job=\"j\",role=\"ps\"} 4\n");
  g->ReplaceSeries({"a", "j"}, {});
  g->ReplaceSeries({"b"}, {});
  EXPECT_EQ(registry.Render(),
            "# HELP pods Pods.\n# TYPE pods gauge\npods{ns=\"a\",job=\"j2\",role=\"ps\"} 1\n");
}

TEST(MetricsTest, DurationBucketsRunFromAMillisecondToAMinute) {
  const std::vector<double> b = MetricsRegistry::DurationBuckets();
  ASSERT_FALSE(b.empty());
  EXPECT_DOUBLE_EQ(b.front(), 0.001);
  EXPECT_DOUBLE_EQ(b.back(), 60);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
}

}  // namespace
}  // namespace disttrain
