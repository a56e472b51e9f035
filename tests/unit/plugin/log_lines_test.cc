#include "plugin/log_lines.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/plugin/pod_fixture.h"

namespace disttrain::plugin {
namespace {

using testing::At;
using ::testing::ElementsAre;

TEST(LogLinesTest, SplitsTheTimestampTheApiServerAdds) {
  LogLine l = ParseLogLine("2026-11-22T10:00:01.5Z {\"event\":\"step\"}");
  ASSERT_TRUE(l.time.has_value());
  EXPECT_EQ(*l.time, At("2026-11-22T10:00:01.5Z"));
  EXPECT_EQ(l.text, "{\"event\":\"step\"}");
  EXPECT_FALSE(ParseLogLine("no timestamp here").time.has_value());
  EXPECT_EQ(ParseLogLine("no timestamp here").text, "no timestamp here");
}

TEST(LogLinesTest, MergesPodsInTimeOrderWithAlignedPrefixes) {
  // Fractions of different lengths (RFC 3339 drops trailing zeros) must compare as times.
  std::vector<PodLog> logs = {
      {"mnist.chief.0",
       {ParseLogLine("2026-11-22T10:00:01.1Z chief a"), ParseLogLine("continued"),
        ParseLogLine("2026-11-22T10:00:03Z chief b")}},
      {"mnist.ps.0",
       {ParseLogLine("2026-11-22T10:00:01.05Z ps a"), ParseLogLine("2026-11-22T10:00:02Z ps b")}}};
  EXPECT_THAT(
      MergeLogs(logs, false),
      ElementsAre("mnist.ps.0    | ps a", "mnist.chief.0 | chief a", "mnist.chief.0 | continued",
                  "mnist.ps.0    | ps b", "mnist.chief.0 | chief b"));
  EXPECT_EQ(MergeLogs(logs, true)[0], "2026-11-22T10:00:01.05+00:00 mnist.ps.0    | ps a");
}

TEST(LogLinesTest, APreviousRunIsMarkedAndComesBeforeTheRunAfterItsRestart) {
  // The run killed at 10:00:03 and the one the kubelet started then: a line of each at the same
  // instant keeps the previous run's first (logs.cc lists it first).
  std::vector<PodLog> logs = {
      {"mnist.worker.0",
       {ParseLogLine("2026-11-22T10:00:01Z starting"), ParseLogLine("2026-11-22T10:00:03Z last")},
       true},
      {"mnist.worker.0",
       {ParseLogLine("2026-11-22T10:00:03Z starting"), ParseLogLine("2026-11-22T10:00:04Z step")},
       false},
      {"mnist.ps.0", {ParseLogLine("2026-11-22T10:00:01.5Z listening")}, false}};
  EXPECT_THAT(
      MergeLogs(logs, false),
      ElementsAre("mnist.worker.0 (previous) | starting", "mnist.ps.0                | listening",
                  "mnist.worker.0 (previous) | last", "mnist.worker.0            | starting",
                  "mnist.worker.0            | step"));
  EXPECT_EQ(RunPrefix("mnist.worker.0", false), "mnist.worker.0");
}

}  // namespace
}  // namespace disttrain::plugin
