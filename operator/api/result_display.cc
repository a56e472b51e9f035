#include "operator/api/result_display.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace disttrain::api {

std::string FormatFigure(double value) { return absl::StrFormat("%.4g", value); }

std::string FormatProgress(const JobProgress& progress) {
  std::optional<int> percent = progress.Percent();
  if (!percent) return absl::StrCat("step ", progress.global_step);
  return absl::StrCat(*percent, "% (", progress.global_step, "/", *progress.target_steps, ")");
}

std::string FormatRemaining(absl::Duration d) {
  const int64_t s = d < absl::ZeroDuration() ? 0 : absl::ToInt64Seconds(d);
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return s % 60 ? absl::StrCat(s / 60, "m", s % 60, "s") : absl::StrCat(s / 60, "m");
  if (s < 86400) {
    const int64_t m = s % 3600 / 60;
    return m ? absl::StrCat(s / 3600, "h", m, "m") : absl::StrCat(s / 3600, "h");
  }
  const int64_t h = s % 86400 / 3600;
  return h ? absl::StrCat(s / 86400, "d", h, "h") : absl::StrCat(s / 86400, "d");
}

}  // namespace disttrain::api
