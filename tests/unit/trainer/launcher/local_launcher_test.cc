// `disttrain-trainer local` (RunLocalCluster, local_launcher.cc) refuses a bad command line
// before it starts anything. Running a cluster of processes is tests/trainer's (trainer_test.py).
#include "trainer/launcher/local_launcher.h"

#include <string>
#include <vector>

#include "common/flags.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

struct BadCommand {
  const char* name;
  std::vector<std::string> args;
};

TEST(LocalLauncherTest, RefusesABadClusterOrBadTrainerFlagsBeforeStartingAnything) {
  const BadCommand cases[] = {
      {"no parameter server", {"--ps=0", "--workers=1"}},
      {"no training replica", {"--ps=1", "--workers=0"}},
      {"a negative final evaluation", {"--workers=1", "--final-eval-seconds=-1"}},
      {"an unknown launcher flag", {"--workers=1", "--gpus=2"}},
      {"an invalid trainer flag", {"--workers=1", "--", "--mode=hogwild2"}},
      {"a stray argument", {"--workers=1", "--", "stray"}},
  };
  for (const BadCommand& c : cases) {
    EXPECT_EQ(RunLocalCluster(c.args), kExitUsage) << c.name;
  }
}

TEST(LocalLauncherTest, HelpIsNotAnError) { EXPECT_EQ(RunLocalCluster({"--help"}), kExitOk); }

}  // namespace
}  // namespace disttrain::trainer
