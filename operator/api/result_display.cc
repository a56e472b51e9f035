#include "operator/api/result_display.h"

#include "absl/strings/str_format.h"

namespace disttrain::api {

std::string FormatFigure(double value) { return absl::StrFormat("%.4g", value); }

}  // namespace disttrain::api
