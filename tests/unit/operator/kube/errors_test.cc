#include "operator/kube/errors.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::kube {
namespace {

using ::testing::HasSubstr;

struct HttpCase {
  int http;
  std::string reason;
  absl::StatusCode code;
};

TEST(ErrorsTest, MapsHttpCodesAndKeepsTheServersMessage) {
  const HttpCase cases[] = {
      {400, "BadRequest", absl::StatusCode::kInvalidArgument},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied},
      {404, "NotFound", absl::StatusCode::kNotFound},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {409, "Conflict", absl::StatusCode::kAborted},
      {410, "Expired", absl::StatusCode::kOutOfRange},
      {422, "Invalid", absl::StatusCode::kInvalidArgument},
      {429, "TooManyRequests", absl::StatusCode::kResourceExhausted},
      {500, "InternalError", absl::StatusCode::kInternal},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
      {504, "Timeout", absl::StatusCode::kDeadlineExceeded},
  };
  for (const HttpCase& c : cases) {
    std::string body =
        R"({"kind":"Status","reason":")" + c.reason + R"(","message":"pods \"x\" is bad"})";
    absl::Status s = StatusFromHttp(c.http, body, "create pods ns/x");
    EXPECT_EQ(s.code(), c.code) << c.http << " " << c.reason;
    EXPECT_THAT(std::string(s.message()), HasSubstr("create pods ns/x: pods \"x\" is bad"));
    EXPECT_EQ(HttpCodeOf(s), c.http);
    EXPECT_EQ(ReasonOf(s), c.reason);
  }
  EXPECT_TRUE(kube::IsAlreadyExists(
      StatusFromHttp(409, R"({"kind":"Status","reason":"AlreadyExists"})", "c")));
  EXPECT_TRUE(
      kube::IsConflict(StatusFromHttp(409, R"({"kind":"Status","reason":"Conflict"})", "c")));
  EXPECT_TRUE(kube::IsGone(StatusFromHttp(410, "{}", "w")));
  EXPECT_TRUE(kube::IsRetryable(StatusFromHttp(429, "{}", "x")));
  EXPECT_TRUE(kube::IsRetryable(StatusFromHttp(503, "{}", "x")));
  EXPECT_FALSE(kube::IsRetryable(StatusFromHttp(403, "{}", "x")));
  EXPECT_THAT(std::string(StatusFromHttp(502, "<html>bad gateway</html>", "get").message()),
              HasSubstr("bad gateway"));
}

TEST(ErrorsTest, ParsesRetryAfterSeconds) {
  EXPECT_EQ(ParseRetryAfter("3"), absl::Seconds(3));
  EXPECT_EQ(ParseRetryAfter(""), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
}

}  // namespace
}  // namespace disttrain::kube
