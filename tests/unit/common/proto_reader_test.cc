#include "common/proto_reader.h"

#include <string>

#include "gtest/gtest.h"

namespace disttrain {
namespace {

using namespace std::string_literals;

// Message bytes written out by hand: field 1 varint 150 (the protobuf guide's example
// 08 96 01), field 2 string "hi", field 3 fixed64, field 4 fixed32, field 5 varint -1 (10 bytes).
const std::string kMessage = "\x08\x96\x01"s + "\x12\x02hi"s + "\x19" + std::string(8, '\x07') +
                             "\x25" + std::string(4, '\x09') + "\x28" + std::string(9, '\xff') +
                             "\x01"s;

TEST(ProtoReaderTest, ReadsEachFieldByNumberAndWireType) {
  ProtoReader r(kMessage);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.field(), 1);
  EXPECT_EQ(r.varint(), 150u);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.field(), 2);
  EXPECT_EQ(r.wire_type(), ProtoReader::WireType::kBytes);
  EXPECT_EQ(r.bytes(), "hi");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.field(), 3);
  ASSERT_TRUE(r.Next());  // fixed64 skipped unread
  EXPECT_EQ(r.field(), 4);
  ASSERT_TRUE(r.Next());  // fixed32 skipped unread
  EXPECT_EQ(r.field(), 5);
  EXPECT_EQ(r.int64(), -1);
  EXPECT_FALSE(r.Next());
  EXPECT_TRUE(r.ok());
}

TEST(ProtoReaderTest, SkipsFieldsThatAreNotRead) {
  ProtoReader r(kMessage);
  std::vector<int> fields;
  while (r.Next()) fields.push_back(r.field());
  EXPECT_EQ(fields, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(r.ok());
}

TEST(ProtoReaderTest, EveryTruncationIsAnErrorNotACrash) {
  // Cut anywhere inside a field, the input is malformed; cut between fields, it is a shorter
  // valid message.
  const std::vector<size_t> boundaries = {0, 3, 7, 16, 21, 32};
  for (size_t cut = 0; cut < kMessage.size(); ++cut) {
    ProtoReader r(std::string_view(kMessage).substr(0, cut));
    while (r.Next()) {
      if (r.field() == 2) r.bytes();
      if (r.field() == 5) r.varint();
    }
    const bool boundary = std::find(boundaries.begin(), boundaries.end(), cut) != boundaries.end();
    EXPECT_EQ(r.ok(), boundary) << "cut at " << cut;
  }
}

TEST(ProtoReaderTest, ALengthPastTheEndIsAnError) {
  const std::string input = "\x12\x05hi"s;  // the reader views into it
  ProtoReader r(input);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.bytes(), "");
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.Next());
}

TEST(ProtoReaderTest, ReadingWithTheWrongWireTypeIsAnError) {
  const std::string input = "\x12\x02hi"s;
  ProtoReader r(input);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.varint(), 0u);
  EXPECT_FALSE(r.ok());
}

TEST(ProtoReaderTest, GroupsAndFieldZeroAreErrors) {
  for (const std::string& input : {"\x0b\x0c"s, "\x00\x01"s}) {  // start group; field 0
    ProtoReader r(input);
    EXPECT_FALSE(r.Next());
    EXPECT_FALSE(r.ok());
  }
}

}  // namespace
}  // namespace disttrain
