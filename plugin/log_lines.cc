#include "plugin/log_lines.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace disttrain::plugin {

LogLine ParseLogLine(const std::string& line) {
  const size_t space = line.find(' ');
  if (space == std::string::npos) return {std::nullopt, line};
  absl::Time t;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, line.substr(0, space), &t, &error))
    return {std::nullopt, line};
  return {t, line.substr(space + 1)};
}

std::string FormatLogLine(const std::string& prefix, size_t width, const LogLine& line,
                          bool timestamps) {
  std::string out;
  if (timestamps && line.time)
    absl::StrAppend(&out, absl::FormatTime(absl::RFC3339_full, *line.time, absl::UTCTimeZone()),
                    " ");
  absl::StrAppend(&out, prefix, std::string(width > prefix.size() ? width - prefix.size() : 0, ' '),
                  " | ", line.text);
  return out;
}

std::string RunPrefix(const std::string& prefix, bool previous) {
  return previous ? absl::StrCat(prefix, " (previous)") : prefix;
}

std::vector<std::string> MergeLogs(const std::vector<PodLog>& logs, bool timestamps) {
  std::vector<std::string> prefixes;
  size_t width = 0;
  for (const PodLog& l : logs) {
    prefixes.push_back(RunPrefix(l.prefix, l.previous));
    width = std::max(width, prefixes.back().size());
  }
  // (time, run, line) sorts by time and keeps each run's order; an untimed line takes the time
  // of the line before it in its run.
  std::vector<std::tuple<absl::Time, size_t, size_t>> order;
  for (size_t p = 0; p < logs.size(); ++p) {
    absl::Time last = absl::InfinitePast();
    for (size_t i = 0; i < logs[p].lines.size(); ++i) {
      if (logs[p].lines[i].time) last = *logs[p].lines[i].time;
      order.emplace_back(last, p, i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const auto& [t, p, i] : order)
    out.push_back(FormatLogLine(prefixes[p], width, logs[p].lines[i], timestamps));
  return out;
}

}  // namespace disttrain::plugin
