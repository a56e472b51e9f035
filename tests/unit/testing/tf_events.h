// Reads back the TensorBoard event files the trainer writes (trainer/summary/event_writer.h),
// checking each record's framing as TensorBoard would.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_TF_EVENTS_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_TF_EVENTS_H_

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorboard/event.pb.h"
#include "trainer/summary/crc32c.h"

namespace disttrain::trainer::testing {

// The little-endian integer of `bytes` bytes at `at`.
inline uint64_t ReadLe(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

// Every event of the file at `path`; a record whose CRCs do not match fails the test.
inline std::vector<tensorboard::Event> ReadEvents(const std::string& path) {
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

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_TF_EVENTS_H_
