#include "trainer/summary/event_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tensorboard/event.pb.h"
#include "tests/unit/testing/tf_events.h"
#include "trainer/summary/crc32c.h"

namespace disttrain::trainer {
namespace {

using testing::ReadEvents;
using testing::ReadLe;

TEST(TfRecordTest, FramesLengthAndDataWithMaskedCrcs) {
  const std::string record = TfRecord("hello");
  ASSERT_EQ(record.size(), 8 + 4 + 5 + 4);
  EXPECT_EQ(ReadLe(record, 0, 8), 5u);
  EXPECT_EQ(ReadLe(record, 8, 4), MaskCrc(Crc32c(record.data(), 8)));
  EXPECT_EQ(record.substr(12, 5), "hello");
  EXPECT_EQ(ReadLe(record, 17, 4), MaskCrc(Crc32c("hello", 5)));
}

TEST(EventWriterTest, OpensWithTheVersionRecordThenWritesOneEventPerStep) {
  const std::string dir = ::testing::TempDir() + "/event_writer_test/train";
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
