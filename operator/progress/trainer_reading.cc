#include "operator/progress/trainer_reading.h"

#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace disttrain::progress {
namespace {

// A sample line's name and value: "name value [timestamp]" or "name{labels} value ...".
// Labelled samples are skipped (the gauges read here have none).
bool ParseSample(absl::string_view line, absl::string_view* name, absl::string_view* value) {
  line = absl::StripAsciiWhitespace(line);
  if (line.empty() || line.front() == '#') return false;
  const size_t end = line.find_first_of(" \t{");
  if (end == absl::string_view::npos || line[end] == '{') return false;
  *name = line.substr(0, end);
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(line.substr(end));
  *value = rest.substr(0, rest.find_first_of(" \t"));
  return true;
}

}  // namespace

absl::StatusOr<TrainerReading> ReadTrainerMetrics(std::string_view text, absl::Time time) {
  std::optional<double> step, target, examples;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    absl::string_view name, value;
    if (!ParseSample(line, &name, &value)) continue;
    std::optional<double>* out = name == kGlobalStep              ? &step
                                 : name == kTargetSteps           ? &target
                                 : name == kExamplesPerGlobalStep ? &examples
                                                                  : nullptr;
    if (out == nullptr) continue;
    double v = 0;
    if (!absl::SimpleAtod(value, &v) || !std::isfinite(v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " is \"", value, "\": not a finite number >= 0"));
    }
    *out = v;
  }
  if (!step) return absl::NotFoundError(absl::StrCat("no ", kGlobalStep, " in the metrics"));
  TrainerReading r;
  r.time = time;
  r.global_step = static_cast<int64_t>(*step);
  if (target && *target >= 1) r.target_steps = static_cast<int64_t>(*target);
  if (examples && *examples > 0) r.examples_per_step = *examples;
  return r;
}

}  // namespace disttrain::progress
