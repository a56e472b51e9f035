#include "common/flags.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Parsed {
  std::string name = "default";
  int64_t steps = 10;
  double rate = 0.5;
  bool sync = false;
};

FlagSet MakeFlags(Parsed* p) {
  FlagSet flags("prog [flags]");
  flags.String("name", &p->name, "Job name.");
  flags.Int("steps", &p->steps, "Steps.");
  flags.Double("learning-rate", &p->rate, "Rate.");
  flags.Bool("sync", &p->sync, "Synchronous.");
  return flags;
}

TEST(FlagSetTest, TellsWhichFlagsWereSetEvenToTheirDefault) {
  Parsed p;
  FlagSet flags = MakeFlags(&p);
  ASSERT_TRUE(flags.Parse({"--name=default", "-steps", "3"}).ok());
  EXPECT_TRUE(flags.WasSet("name"));
  EXPECT_TRUE(flags.WasSet("steps"));
  EXPECT_FALSE(flags.WasSet("sync"));
  EXPECT_FALSE(flags.WasSet("learning-rate"));
}

TEST(FlagSetTest, AcceptsEqualsAndSpaceFormsAndKeepsPositionals) {
  Parsed p;
  FlagSet flags = MakeFlags(&p);
  auto rest = flags.Parse(
      {"render", "--name=dist", "--steps", "42", "--learning-rate=0.01", "--sync", "file.yaml"});
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_THAT(*rest, ElementsAre("render", "file.yaml"));
  EXPECT_EQ(p.name, "dist");
  EXPECT_EQ(p.steps, 42);
  EXPECT_DOUBLE_EQ(p.rate, 0.01);
  EXPECT_TRUE(p.sync);
}

TEST(FlagSetTest, KeepsDefaultsForFlagsNotGiven) {
  Parsed p;
  FlagSet flags = MakeFlags(&p);
  ASSERT_TRUE(flags.Parse({}).ok());
  EXPECT_EQ(p.name, "default");
  EXPECT_EQ(p.steps, 10);
  EXPECT_FALSE(p.sync);
  EXPECT_FALSE(flags.help_requested());
}

TEST(FlagSetTest, EverythingAfterDoubleDashIsPositional) {
  Parsed p;
  FlagSet flags = MakeFlags(&p);
  auto rest = flags.Parse({"--sync=false", "--", "--steps", "7"});
  ASSERT_TRUE(rest.ok());
  EXPECT_THAT(*rest, ElementsAre("--steps", "7"));
  EXPECT_EQ(p.steps, 10);
  EXPECT_FALSE(p.sync);
}

struct BadCase {
  std::string test_name;
  std::vector<std::string> args;
  std::string message;
};

class FlagSetErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(FlagSetErrorTest, RejectsWithMessageNamingTheFlag) {
  Parsed p;
  FlagSet flags = MakeFlags(&p);
  auto rest = flags.Parse(GetParam().args);
  ASSERT_FALSE(rest.ok());
  EXPECT_EQ(rest.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rest.status().message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FlagSetErrorTest,
    ::testing::Values(BadCase{"UnknownFlag", {"--nope=1"}, "unknown flag --nope"},
                      BadCase{"MissingValue", {"--steps"}, "flag --steps needs a value"},
                      BadCase{
                          "NotAnInteger", {"--steps=ten"}, "--steps: \"ten\" is not an integer"},
                      BadCase{"NotANumber", {"--learning-rate", "fast"}, "is not a number"},
                      BadCase{"NotABool", {"--sync=maybe"}, "is not true or false"}),
    [](const auto& info) { return info.param.test_name; });

TEST(FlagSetTest, HelpListsEveryFlagWithItsDefault) {
  Parsed p;
  FlagSet flags = MakeFlags(&p);
  ASSERT_TRUE(flags.Parse({"--help"}).ok());
  EXPECT_TRUE(flags.help_requested());
  std::string help = flags.Help();
  EXPECT_THAT(help, HasSubstr("Usage: prog [flags]"));
  EXPECT_THAT(help, HasSubstr("--steps VALUE"));
  EXPECT_THAT(help, HasSubstr("(default 10)"));
  EXPECT_THAT(help, HasSubstr("--sync\n"));
}

}  // namespace
}  // namespace disttrain
