#include "operator/kube/rest_http.h"

#include <cpprest/http_msg.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/errors.h"
#include "operator/kube/protobuf.h"
#include "tests/unit/operator/kube/proto_envelope.h"

namespace disttrain::kube {
namespace {

using namespace std::string_literals;
using ::testing::HasSubstr;

struct ErrorBodyCase {
  std::string name;
  std::string body;
  bool protobuf;
  std::string reason;   // what StatusFromHttp reads of the body
  std::string message;  // part of the error's message
};

TEST(RestHttpTest, AnErrorReadsTheSameInProtobufAsInJson) {
  // Status{status "Failure" (2), message "pods is forbidden" (3), reason "Forbidden" (4),
  // code 403 (6)}, as a built-in resource's error comes when protobuf was asked for.
  const std::string forbidden =
      "\x12\x07"
      "Failure\x1a\x11pods is forbidden\x22\x09"
      "Forbidden\x30\x93\x03"s;
  const ErrorBodyCase cases[] = {
      {"Json", R"({"kind":"Status","reason":"Forbidden","message":"pods is forbidden"})", false,
       "Forbidden", "get pods ns/p: pods is forbidden"},
      {"Protobuf", testing::Envelope("v1", "Status", forbidden), true, "Forbidden",
       "get pods ns/p: pods is forbidden"},
      {"ProtobufThatIsNot", "{\"not\": \"protobuf\"}", true, "", "get pods ns/p"},
  };
  for (const ErrorBodyCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::Status s = StatusFromHttp(403, ErrorBody(c.body, c.protobuf), "get pods ns/p");
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(ReasonOf(s), c.reason);
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
}

TEST(RestHttpTest, APatchSaysItsKindInItsContentType) {
  const std::pair<PatchType, std::string> cases[] = {
      {PatchType::kMerge, "application/merge-patch+json"},
      {PatchType::kStrategicMerge, "application/strategic-merge-patch+json"},
      {PatchType::kJson, "application/json-patch+json"},
  };
  for (const auto& [type, content_type] : cases) {
    EXPECT_EQ(PatchContentType(type), content_type);
  }
}

TEST(RestHttpTest, ARequestCarriesTheTokenOnlyWhenThereIsOne) {
  RestConfig config;
  config.user_agent = "kubectl-dtr";
  web::http::http_request anonymous = MakeRequest(config, "GET", "/api/v1/pods?limit=5");
  EXPECT_EQ(anonymous.method(), "GET");
  EXPECT_EQ(anonymous.request_uri().to_string(), "/api/v1/pods?limit=5");
  EXPECT_EQ(anonymous.headers().find("Accept")->second, "application/json");
  EXPECT_EQ(anonymous.headers().find("User-Agent")->second, "kubectl-dtr");
  EXPECT_FALSE(anonymous.headers().has("Authorization"));

  config.bearer_token = "s3cr3t";
  web::http::http_request with_token =
      MakeRequest(config, "PATCH", "/api/v1/pods", kAcceptMetadata);
  EXPECT_EQ(with_token.headers().find("Authorization")->second, "Bearer s3cr3t");
  EXPECT_EQ(with_token.headers().find("Accept")->second, kAcceptMetadata);
}

TEST(RestHttpTest, OnlyAProtobufContentTypeIsReadAsProtobuf) {
  const std::pair<std::string, bool> cases[] = {
      {"application/vnd.kubernetes.protobuf", true},
      {"application/vnd.kubernetes.protobuf;stream=watch", true},
      {"application/json", false},
      {"text/plain; charset=utf-8", false},
  };
  for (const auto& [content_type, protobuf] : cases) {
    web::http::http_response response(200);
    response.headers().set_content_type(content_type);
    EXPECT_EQ(IsProtobuf(response), protobuf) << content_type;
  }
}

}  // namespace
}  // namespace disttrain::kube
