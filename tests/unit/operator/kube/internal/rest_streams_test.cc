#include "operator/kube/internal/rest_streams.h"

#include <cpprest/containerstream.h>

#include <string>

#include "gtest/gtest.h"
#include "operator/kube/protobuf.h"

namespace disttrain::kube {
namespace {

using namespace std::string_literals;

// As bytes: a char stream read as unsigned char (open_istream of a std::string) is a type pun
// that UndefinedBehaviorSanitizer reports.
concurrency::streams::istream Body(const std::string& bytes) {
  return concurrency::streams::bytestream::open_istream(
      std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

std::string Frame(const std::string& payload) {
  const size_t n = payload.size();
  return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                     static_cast<char>(n >> 8), static_cast<char>(n)} +
         payload;
}

TEST(BodyReaderTest, SplitsLengthPrefixedFramesIncludingEmptyAndLargeOnes) {
  // 100,000 bytes is more than one read of the body (64 KiB).
  const std::string large(100000, 'x');
  BodyReader reader(Body(Frame("abc") + Frame("") + Frame(large) + Frame("\n\0z"s)));
  std::string frame;
  ASSERT_TRUE(reader.NextFrame(&frame));
  EXPECT_EQ(frame, "abc");
  ASSERT_TRUE(reader.NextFrame(&frame));
  EXPECT_EQ(frame, "");
  ASSERT_TRUE(reader.NextFrame(&frame));
  EXPECT_EQ(frame, large);
  ASSERT_TRUE(reader.NextFrame(&frame));
  EXPECT_EQ(frame, "\n\0z"s);
  EXPECT_FALSE(reader.NextFrame(&frame));
}

TEST(BodyReaderTest, ABodyThatEndsInsideAFrameThrows) {
  BodyReader cut_payload(Body(Frame("abcdef").substr(0, 7)));
  std::string frame;
  EXPECT_THROW(cut_payload.NextFrame(&frame), std::exception);
  BodyReader cut_length(Body("\x00\x00"s));
  EXPECT_THROW(cut_length.NextFrame(&frame), std::exception);
}

TEST(BodyReaderTest, SplitsLinesAndReturnsALastLineWithoutNewline) {
  const std::string long_line(70000, 'y');
  BodyReader reader(Body("one\n\n" + long_line + "\nlast"));
  std::string line;
  std::vector<std::string> lines;
  while (reader.NextLine(&line)) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "", long_line, "last"}));
}

// An object in the API server's envelope: "k8s\0", Unknown{typeMeta{apiVersion, kind}, raw}.
std::string Envelope(const std::string& api_version, const std::string& kind,
                     const std::string& raw) {
  const std::string type_meta = "\x0a"s + static_cast<char>(api_version.size()) + api_version +
                                "\x12" + static_cast<char>(kind.size()) + kind;
  return "k8s\0"s + "\x0a" + static_cast<char>(type_meta.size()) + type_meta + "\x12" +
         static_cast<char>(raw.size()) + raw;
}

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
