// The figures of status.result as people read them: a few significant digits for the printer
// columns of `kubectl get dtr -o wide` (status.result.display) and for `kubectl dtr status`,
// while status.result keeps each number at full precision for programs. Pure; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_RESULT_DISPLAY_H_
#define DISTTRAIN_OPERATOR_API_RESULT_DISPLAY_H_

#include <string>

namespace disttrain::api {

// 4 significant digits: "0.3739", "12.5", "1235", "1.234e-05". Significant digits rather than
// decimals, so that a small loss does not read as zero.
std::string FormatFigure(double value);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_RESULT_DISPLAY_H_
