#include "common/log.h"

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace disttrain {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "info";
}

void AppendValue(std::string* out, absl::string_view v) {
  bool quote = v.empty() || v.find_first_of(" \"=\t\n") != absl::string_view::npos;
  if (!quote) {
    out->append(v.data(), v.size());
    return;
  }
  out->push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') out->push_back('\\');
    if (c == '\n') {
      out->append("\\n");
      continue;
    }
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(); }

std::string FormatLogLine(LogLevel level, absl::string_view message, LogFields fields) {
  std::string line = absl::StrCat(LevelName(level), " ");
  AppendValue(&line, message);
  for (const auto& [k, v] : fields) {
    absl::StrAppend(&line, " ", k, "=");
    AppendValue(&line, v);
  }
  return line;
}

void Log(LogLevel level, absl::string_view message, LogFields fields) {
  if (!LogEnabled(level)) return;
  std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ",
                   FormatLogLine(level, message, fields), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace disttrain
