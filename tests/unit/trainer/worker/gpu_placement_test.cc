#include "trainer/worker/gpu_placement.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

using Kind = VisibleGpus::Kind;
using ::testing::HasSubstr;

TEST(GpuPlacementTest, ReadsTheMasksOfTheDevicePluginAndTheCudaRuntime) {
  struct Case {
    std::string name;
    std::optional<std::string> cuda, nvidia;
    Kind kind;
    std::vector<std::string> ids;
    std::string reason;  // a part of it, for kNone
  };
  const std::string uuid = "GPU-6f1e3b0c-8a4d-2c7e-91f0-5b3a7d9e1c42";
  for (const Case& c : std::vector<Case>{
           {"both unset: all the driver sees", std::nullopt, std::nullopt, Kind::kAll, {}, ""},
           {"cuda indices", "0,1", std::nullopt, Kind::kListed, {"0", "1"}, ""},
           {"cuda uuid", uuid, std::nullopt, Kind::kListed, {uuid}, ""},
           {"cuda empty hides all", "", std::nullopt, Kind::kNone, {}, "CUDA_VISIBLE_DEVICES=\"\""},
           {"cuda -1 hides all", "-1", std::nullopt, Kind::kNone, {}, "hides every GPU"},
           {"cuda stops at the first invalid entry",
            "1,x,2",
            std::nullopt,
            Kind::kListed,
            {"1"},
            ""},
           {"device plugin uuid", std::nullopt, uuid, Kind::kListed, {uuid}, ""},
           {"device plugin indices", std::nullopt, "0,1", Kind::kListed, {"0", "1"}, ""},
           {"device plugin all", std::nullopt, "all", Kind::kAll, {}, ""},
           {"operator's void",
            std::nullopt,
            "void",
            Kind::kNone,
            {},
            "NVIDIA_VISIBLE_DEVICES=\"void\""},
           {"none", std::nullopt, "none", Kind::kNone, {}, "the pod was given no GPU"},
           {"nvidia empty", std::nullopt, "", Kind::kNone, {}, "NVIDIA_VISIBLE_DEVICES=\"\""},
           {"void wins over cuda", "0", "void", Kind::kNone, {}, "NVIDIA_VISIBLE_DEVICES"},
           {"cuda narrows the plugin's list", "1", "GPU-a,GPU-b", Kind::kListed, {"1"}, ""},
           {"cuda empty in a GPU pod", "", uuid, Kind::kNone, {}, "CUDA_VISIBLE_DEVICES"},
       }) {
    auto view = [](const std::optional<std::string>& s) {
      return s ? std::optional<absl::string_view>(*s) : std::nullopt;
    };
    const VisibleGpus v = ParseVisibleGpus(view(c.cuda), view(c.nvidia));
    EXPECT_EQ(v.kind, c.kind) << c.name;
    EXPECT_EQ(v.ids, c.ids) << c.name;
    if (c.kind == Kind::kNone) {
      EXPECT_THAT(v.reason, HasSubstr(c.reason)) << c.name;
    }
  }
}

}  // namespace
}  // namespace disttrain::trainer
