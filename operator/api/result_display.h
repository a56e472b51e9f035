// The figures of status.result and status.progress as people read them: a few significant
// digits for the printer columns of `kubectl get dtr -o wide` (status.result.display,
// status.progress.display) and for `kubectl dtr status`, while the figures themselves keep full
// precision for programs. Pure; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_RESULT_DISPLAY_H_
#define DISTTRAIN_OPERATOR_API_RESULT_DISPLAY_H_

#include <string>

#include "absl/time/time.h"
#include "operator/api/types.h"

namespace disttrain::api {

// 4 significant digits: "0.3739", "12.5", "1235", "1.234e-05". Significant digits rather than
// decimals, so that a small loss does not read as zero.
std::string FormatFigure(double value);

// "60% (1200/2000)", or "step 1200" when the job did not say where it stops.
std::string FormatProgress(const JobProgress& progress);

// A duration as `kubectl get` prints ages: "45s", "4m10s", "2h5m", "3d4h". Negative: "0s".
std::string FormatRemaining(absl::Duration d);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_RESULT_DISPLAY_H_
