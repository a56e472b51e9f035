#include "trainer/summary/event_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tensorboard/event.pb.h"
#include "trainer/summary/crc32c.h"

namespace disttrain::trainer {
namespace {

TEST(Crc32cTest, MatchesTheStandardCheckValues) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);  // the CRC-32C check value (RFC 3720)
  EXPECT_EQ(Crc32c("", 0), 0u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8a9136aau);  // RFC 3720 B.4
}

TEST(Crc32cTest, MaskRotatesAndOffsetsAsTensorFlowDoes) {
  EXPECT_EQ(MaskCrc(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc(0x00008000u), 0xa282ead9u);  // bit 15 rotates to bit 0
}

uint64_t ReadLe(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

TEST(TfRecordTest, FramesLengthAndDataWithMaskedCrcs) {
  const std::string record = TfRecord("hello");
  ASSERT_EQ(record.size(), 8 + 4 + 5 + 4);
  EXPECT_EQ(ReadLe(record, 0, 8), 5u);
  EXPECT_EQ(ReadLe(record, 8, 4), MaskCrc(Crc32c(record.data(), 8)));
  EXPECT_EQ(record.substr(12, 5), "hello");
  EXPECT_EQ(ReadLe(record, 17, 4), MaskCrc(Crc32c("hello", 5)));
}

std::vector<tensorboard::Event> ReadEvents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string data = buffer.str();
  std::vector<tensorboard::Event> events;
  for (size_t at = 0; at < data.size();) {
    const uint64_t n = ReadLe(data, at, 8);
    EXPECT_EQ(ReadLe(data, at + 8, 4), MaskCrc(Crc32c(data.data() + at, 8)));
    EXPECT_EQ(ReadLe(data, at + 12 + n, 4), MaskCrc(Crc32c(data.data() + at + 12, n)));
    events.emplace_back().ParseFromString(data.substr(at + 12, n));
    at += 12 + n + 4;
  }
  return events;
}

TEST(EventWriterTest, OpensWithTheVersionRecordThenWritesOneEventPerStep) {
  const std::string dir = testing::TempDir() + "/event_writer_test/train";
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Open(dir);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_NE((*w)->path().find("/events.out.tfevents."), std::string::npos);
  ASSERT_TRUE((*w)->WriteScalars(7, {{"loss", 0.5f}, {"global_step/sec", 3.0f}}).ok());
  ASSERT_TRUE((*w)->WriteScalars(8, {{"loss", 0.25f}}).ok());

  // Each record is on disk as soon as it is written: no close needed.
  std::vector<tensorboard::Event> events = ReadEvents((*w)->path());
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_EQ(events[1].step(), 7);
  ASSERT_EQ(events[1].summary().value_size(), 2);
  EXPECT_EQ(events[1].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 0.5f);
  EXPECT_EQ(events[1].summary().value(1).tag(), "global_step/sec");
  EXPECT_EQ(events[2].step(), 8);
  EXPECT_GT(events[2].wall_time(), 1.7e9);
}

TEST(EventWriterTest, ReportsAFolderItCannotCreate) {
  absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Open("/proc/no/such/dir");
  EXPECT_FALSE(w.ok());
}

}  // namespace
}  // namespace disttrain::trainer
