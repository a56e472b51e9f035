#include "operator/kube/protobuf.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/operator/kube/proto_envelope.h"

namespace disttrain::kube {
namespace {

using namespace std::string_literals;
using testing::Envelope;

TEST(ProtobufTest, ReadsTheEnvelopeOfAnObject) {
  const std::string pod = Envelope("v1", "Pod", "\x0a\x00"s);  // `o` views into it
  absl::StatusOr<ProtoObject> o = ParseProtoObject(pod);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->api_version, "v1");
  EXPECT_EQ(o->kind, "Pod");
  EXPECT_EQ(o->raw, "\x0a\x00"s);
  EXPECT_FALSE(ParseProtoObject("{\"kind\":\"Pod\"}").ok());  // JSON is not protobuf
  EXPECT_FALSE(ParseProtoObject("k8s\0"s).ok());              // no raw object
}

TEST(ProtobufTest, ReadsAWatchEventAndAStatus) {
  // Status{status "Failure" (2), message "too old" (3), reason "Expired" (4), code 410 (6)}.
  const std::string status =
      "\x12\x07"
      "Failure\x1a\x07too old\x22\x07"
      "Expired\x30\x9a\x03"s;
  const std::string object = Envelope("v1", "Status", status);
  const std::string event =
      "\x0a\x05"
      "ERROR\x12"s +
      static_cast<char>(object.size() + 2) + "\x0a" + static_cast<char>(object.size()) + object;
  absl::StatusOr<ProtoWatchEvent> e = ParseProtoWatchEvent(event);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, "ERROR");
  absl::StatusOr<ProtoObject> o = ParseProtoObject(e->object);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->kind, "Status");
  EXPECT_EQ(ProtoStatusToJson(o->raw),
            nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Status","status":"Failure",
                                      "message":"too old","reason":"Expired","code":410})"));
  EXPECT_FALSE(ParseProtoWatchEvent("\x12\x00"s).ok());  // no type
}

}  // namespace
}  // namespace disttrain::kube
