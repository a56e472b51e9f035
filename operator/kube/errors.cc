#include "operator/kube/errors.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace disttrain::kube {
namespace {

constexpr char kCodePayload[] = "disttrain.io/http-code";
constexpr char kReasonPayload[] = "disttrain.io/k8s-reason";

absl::StatusCode CodeFor(int http, absl::string_view reason) {
  switch (http) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return http >= 500 ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
  }
}

}  // namespace

absl::Status StatusFromHttp(int http_code, absl::string_view body, absl::string_view context) {
  std::string reason, message;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    reason = j.value("reason", "");
    message = j.value("message", "");
  }
  if (message.empty()) message = std::string(body.substr(0, 300));
  absl::Status status(CodeFor(http_code, reason),
                      absl::StrCat(context, ": ", message, " (HTTP ", http_code,
                                   reason.empty() ? "" : absl::StrCat(" ", reason), ")"));
  status.SetPayload(kCodePayload, absl::Cord(absl::StrCat(http_code)));
  if (!reason.empty()) status.SetPayload(kReasonPayload, absl::Cord(reason));
  return status;
}

int HttpCodeOf(const absl::Status& status) {
  auto p = status.GetPayload(kCodePayload);
  int code = 0;
  if (p && absl::SimpleAtoi(std::string(*p), &code)) return code;
  return 0;
}

std::string ReasonOf(const absl::Status& status) {
  auto p = status.GetPayload(kReasonPayload);
  return p ? std::string(*p) : "";
}

bool IsRetryable(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

std::optional<absl::Duration> ParseRetryAfter(absl::string_view header) {
  int seconds = 0;
  if (!header.empty() && absl::SimpleAtoi(header, &seconds) && seconds >= 0) {
    return absl::Seconds(seconds);
  }
  return std::nullopt;
}

}  // namespace disttrain::kube
