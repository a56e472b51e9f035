#include "trainer/summary/crc32c.h"

#include <string>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace disttrain::trainer
