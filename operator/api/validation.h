// Cross-field validation of a DistributedTraining: the rules the CRD's schema and CEL rules
// enforce in the API server, checked again here for `render` and as a second line.
// Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_VALIDATION_H_
#define DISTTRAIN_OPERATOR_API_VALIDATION_H_

#include "absl/status/status.h"
#include "operator/api/types.h"

namespace disttrain::api {

// OK, or InvalidArgument listing every violation as "<field path>: <what is wrong>", joined
// with "; ".
absl::Status Validate(const DistributedTraining& job);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_VALIDATION_H_
