// Tests common/log.cc: the line format that log readers parse, and the level filter.
#include "common/log.h"

#include <gtest/gtest.h>

namespace disttrain {
namespace {

struct LineCase {
  std::string name;
  LogLevel level;
  std::string message;
  std::string key, value;
  std::string want;
};

class LogLineTest : public ::testing::TestWithParam<LineCase> {};

TEST_P(LogLineTest, FormatsLevelMessageAndQuotedValues) {
  const LineCase& c = GetParam();
  EXPECT_EQ(FormatLogLine(c.level, c.message, {{c.key, c.value}}), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, LogLineTest,
    ::testing::Values(
        LineCase{"Plain", LogLevel::kInfo, "started", "job", "ns/dist", "info started job=ns/dist"},
        LineCase{"SpacesQuoteTheMessageAndValue", LogLevel::kWarning, "pod failed", "reason",
                 "exit code 1", "warning \"pod failed\" reason=\"exit code 1\""},
        LineCase{"QuotesAndBackslashesAreEscaped", LogLevel::kError, "bad", "spec", "a \"b\" c\\d",
                 "error bad spec=\"a \\\"b\\\" c\\\\d\""},
        LineCase{"NewlinesStayOnOneLine", LogLevel::kDebug, "x", "err", "line1\nline2",
                 "debug x err=\"line1\\nline2\""},
        LineCase{"EqualsSignsAreQuoted", LogLevel::kInfo, "x", "selector", "a=b",
                 "info x selector=\"a=b\""},
        LineCase{"EmptyValuesShowAsQuotes", LogLevel::kInfo, "x", "node", "", "info x node=\"\""}),
    [](const auto& info) { return info.param.name; });

TEST(LogTest, ALineWithSeveralFieldsKeepsTheirOrder) {
  EXPECT_EQ(FormatLogLine(LogLevel::kInfo, "reconciled", {{"job", "a/b"}, {"pods", "3"}}),
            "info reconciled job=a/b pods=3");
}

TEST(LogTest, LinesAboveTheLevelAreDropped) {
  SetLogLevel(LogLevel::kWarning);
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarning));
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
  SetLogLevel(LogLevel::kDebug);
  EXPECT_TRUE(LogEnabled(LogLevel::kDebug));
  SetLogLevel(LogLevel::kInfo);
  EXPECT_FALSE(LogEnabled(LogLevel::kDebug));
}

TEST(LogTest, LogWritesOneTimestampedLineToStderr) {
  ::testing::internal::CaptureStderr();
  LogInfo("hello", {{"who", "world"}});
  LogDebug("hidden");
  const std::string err = ::testing::internal::GetCapturedStderr();
  // "2026-11-27T16:39:37.123Z info hello who=world\n"
  ASSERT_EQ(err.size(), 25 + std::string("info hello who=world\n").size()) << err;
  EXPECT_EQ(err.substr(24), " info hello who=world\n");
  EXPECT_EQ(err[10], 'T');
  EXPECT_EQ(err[23], 'Z');
}

}  // namespace
}  // namespace disttrain
