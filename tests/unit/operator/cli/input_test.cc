#include "operator/cli/input.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace disttrain::cli {
namespace {

TEST(ReadInputTest, ReadsAWholeFileAndNamesOneItCannotOpen) {
  const std::string path = ::testing::TempDir() + "/input_test.yaml";
  {
    std::ofstream out(path);
    out << "kind: TFJob\nmetadata: {name: a}\n";
  }
  absl::StatusOr<std::string> text = ReadInput(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "kind: TFJob\nmetadata: {name: a}\n");
  std::remove(path.c_str());
  absl::StatusOr<std::string> missing = ReadInput(path);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "cannot open " + path);
}

}  // namespace
}  // namespace disttrain::cli
