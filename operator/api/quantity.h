// Kubernetes resource quantities ("500m", "2", "1.5Gi", "1e3"), parsed exactly enough to add
// requests together for a PodGroup's minResources. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_QUANTITY_H_
#define DISTTRAIN_OPERATOR_API_QUANTITY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace disttrain::api {

// The quantity in thousandths of its unit (cores → millicores, bytes → millibytes), rounded up
// as Kubernetes rounds requests. InvalidArgument for text that is not a quantity.
absl::StatusOr<int64_t> ParseMilliQuantity(absl::string_view text);

// A canonical text for a milli value: "250m", "4", "16Gi", "1536Mi", "1000".
std::string FormatMilliQuantity(int64_t milli);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_QUANTITY_H_
