#include "trainer/termination_message.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;

class TerminationMessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("termination-", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::path dir_;
};

TEST_F(TerminationMessageTest, ReplacesTheFileTheKubeletMadeWithOneLineOfJson) {
  const fs::path path = dir_ / "termination-log";
  std::ofstream(path) << "an older, longer message from a previous run\n";
  WriteTerminationMessage(path.string(), {{"globalStep", 40}, {"loss", 0.5}});
  EXPECT_EQ(Read(path), "{\"globalStep\":40,\"loss\":0.5}\n");
}

TEST_F(TerminationMessageTest, WritesNothingOutsideKubernetes) {
  const fs::path path = dir_ / "termination-log";  // no kubelet made it
  WriteTerminationMessage(path.string(), {{"globalStep", 40}});
  EXPECT_FALSE(fs::exists(path));
  WriteTerminationMessage("", {{"globalStep", 40}});  // --termination-message-path ""
}

}  // namespace
}  // namespace disttrain::trainer
