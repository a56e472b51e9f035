#include "trainer/worker/gpu_placement.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace disttrain::trainer {
namespace {

bool IsDevice(absl::string_view entry) {
  int index = 0;
  return (absl::SimpleAtoi(entry, &index) && index >= 0) || absl::StartsWith(entry, "GPU-") ||
         absl::StartsWith(entry, "MIG-");
}

std::vector<std::string> Entries(absl::string_view list) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    absl::string_view entry = absl::StripAsciiWhitespace(part);
    if (!IsDevice(entry)) break;
    out.emplace_back(entry);
  }
  return out;
}

std::optional<absl::string_view> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return absl::string_view(v);
}

}  // namespace

VisibleGpus ParseVisibleGpus(std::optional<absl::string_view> cuda,
                             std::optional<absl::string_view> nvidia) {
  VisibleGpus out;
  if (nvidia) {
    const absl::string_view v = absl::StripAsciiWhitespace(*nvidia);
    if (v.empty() || v == "void" || v == "none") {
      out.kind = VisibleGpus::Kind::kNone;
      out.reason = absl::StrCat("NVIDIA_VISIBLE_DEVICES=\"", *nvidia,
                                "\": the pod was given no GPU (request nvidia.com/gpu in the "
                                "role's resources)");
      return out;
    }
    if (v != "all") {
      out.kind = VisibleGpus::Kind::kListed;
      for (absl::string_view part : absl::StrSplit(v, ','))
        out.ids.emplace_back(absl::StripAsciiWhitespace(part));
    }
  }
  if (cuda) {
    std::vector<std::string> ids = Entries(*cuda);
    if (ids.empty()) {
      out.kind = VisibleGpus::Kind::kNone;
      out.ids.clear();
      out.reason = absl::StrCat("CUDA_VISIBLE_DEVICES=\"", *cuda, "\" hides every GPU");
      return out;
    }
    out.kind = VisibleGpus::Kind::kListed;
    out.ids = std::move(ids);
  }
  return out;
}

VisibleGpus VisibleGpusFromEnvironment() {
  return ParseVisibleGpus(Env("CUDA_VISIBLE_DEVICES"), Env("NVIDIA_VISIBLE_DEVICES"));
}

}  // namespace disttrain::trainer
