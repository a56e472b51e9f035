// Log lines as the API server returns them with timestamps=true ("<RFC 3339 time> <text>"), and
// their merge across pods for `kubectl dtr logs`. Pure functions; thread-safe.
#ifndef DISTTRAIN_PLUGIN_LOG_LINES_H_
#define DISTTRAIN_PLUGIN_LOG_LINES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace disttrain::plugin {

struct LogLine {
  std::optional<absl::Time> time;  // absent when the line has no parseable timestamp
  std::string text;
};

// Splits "2026-11-22T10:00:00.123456789Z text" into its time and text.
LogLine ParseLogLine(const std::string& line);

// The log of one run of a pod's main container.
struct PodLog {
  std::string prefix;  // "job.role.index"
  std::vector<LogLine> lines;
  bool previous = false;  // the run before the container's last restart
};

// The prefix of a run's lines: a previous run's says so, since its lines (often the ones that
// explain a crash) would otherwise read as the running container's.
std::string RunPrefix(const std::string& prefix, bool previous);

// Every run's lines in time order (a run's own order kept for equal or missing times, and runs
// with equal times in the order given), each as "<run prefix> | <text>" padded so the bars line
// up; with `timestamps`, the time goes first.
std::vector<std::string> MergeLogs(const std::vector<PodLog>& logs, bool timestamps);

// One line as printed while following: prefix padded to `width`.
std::string FormatLogLine(const std::string& prefix, size_t width, const LogLine& line,
                          bool timestamps);

}  // namespace disttrain::plugin

#endif  // DISTTRAIN_PLUGIN_LOG_LINES_H_
