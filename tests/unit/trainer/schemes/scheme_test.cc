#include "trainer/schemes/scheme.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(SchemeTest, ParsesEveryModeAndRejectsUnknownOnes) {
  for (const char* mode : {"hogwild", "downpour", "downpour-sgd", "agn", "sync", "sagn", "dynsgd",
                           "aeasgd", "aeamsgd"}) {
    absl::StatusOr<Scheme> s = ParseScheme(mode);
    ASSERT_TRUE(s.ok()) << mode;
    EXPECT_STREQ(SchemeName(*s), mode);
  }
  EXPECT_EQ(*ParseScheme("async"), Scheme::kHogwild);
  absl::StatusOr<Scheme> bad = ParseScheme("hogwild2");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("downpour-sgd"));
}

}  // namespace
}  // namespace disttrain::trainer
