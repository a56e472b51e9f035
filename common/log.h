// Structured logging: one line per event on stderr, "<time> <level> <message> key=value ...".
// Values with spaces or quotes are quoted. Never pass secrets (tokens, keys) as values.
// Thread-safe: each line is written with a single call.
#ifndef DISTTRAIN_COMMON_LOG_H_
#define DISTTRAIN_COMMON_LOG_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace disttrain {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

using LogFields = std::initializer_list<std::pair<absl::string_view, std::string>>;

// Lines above `level` are dropped. Default kInfo; -v=3 gives kDebug.
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

void Log(LogLevel level, absl::string_view message, LogFields fields = {});
inline void LogError(absl::string_view m, LogFields f = {}) { Log(LogLevel::kError, m, f); }
inline void LogWarning(absl::string_view m, LogFields f = {}) { Log(LogLevel::kWarning, m, f); }
inline void LogInfo(absl::string_view m, LogFields f = {}) { Log(LogLevel::kInfo, m, f); }
inline void LogDebug(absl::string_view m, LogFields f = {}) { Log(LogLevel::kDebug, m, f); }

// The formatted line without the timestamp (for tests).
std::string FormatLogLine(LogLevel level, absl::string_view message, LogFields fields);

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_LOG_H_
