#include "operator/kube/internal/rest_streams.h"

#include <cpprest/containerstream.h>

#include <string>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace disttrain::kube
