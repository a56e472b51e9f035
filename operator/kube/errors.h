// Kubernetes API errors as absl::Status. The HTTP code maps onto the canonical codes gRPC uses;
// the API server's reason ("AlreadyExists", "Conflict", "Expired", ...) and message are kept.
// Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_KUBE_ERRORS_H_
#define DISTTRAIN_OPERATOR_KUBE_ERRORS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace disttrain::kube {

// `body` is the response body (a metav1.Status when the API server sent one).
// 400/422 InvalidArgument, 401 Unauthenticated, 403 PermissionDenied, 404 NotFound,
// 409 AlreadyExists (reason AlreadyExists) or Aborted (a write conflict), 410 OutOfRange
// (resource version too old), 429 ResourceExhausted, 500 Internal, 503 Unavailable,
// 504 DeadlineExceeded. Each carries the HTTP code and reason as payloads.
absl::Status StatusFromHttp(int http_code, absl::string_view body, absl::string_view context);

int HttpCodeOf(const absl::Status& status);        // 0 when none
std::string ReasonOf(const absl::Status& status);  // "" when none

inline bool IsNotFound(const absl::Status& s) { return s.code() == absl::StatusCode::kNotFound; }
inline bool IsAlreadyExists(const absl::Status& s) {
  return s.code() == absl::StatusCode::kAlreadyExists;
}
inline bool IsConflict(const absl::Status& s) { return s.code() == absl::StatusCode::kAborted; }
inline bool IsGone(const absl::Status& s) { return s.code() == absl::StatusCode::kOutOfRange; }
// 429, 5xx and transport failures: worth retrying with backoff.
bool IsRetryable(const absl::Status& s);

// Seconds from a Retry-After header value (only the delta-seconds form), if any.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view header);

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_ERRORS_H_
