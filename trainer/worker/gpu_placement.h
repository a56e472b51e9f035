// Which GPUs a worker may use, from the environment Kubernetes gives its pod. The NVIDIA device
// plugin sets NVIDIA_VISIBLE_DEVICES to the GPUs it allocated (UUIDs, or indices), and the NVIDIA
// container runtime mounts exactly those, numbered from 0 inside the container; "void", "none"
// or "" means none (the operator sets "void" for roles that request no nvidia.com/gpu).
// CUDA_VISIBLE_DEVICES narrows what the CUDA runtime enumerates further: "" or a list whose first
// entry is not a device ("-1") hides every GPU. Pure functions; thread-safe.
#ifndef DISTTRAIN_TRAINER_WORKER_GPU_PLACEMENT_H_
#define DISTTRAIN_TRAINER_WORKER_GPU_PLACEMENT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace disttrain::trainer {

struct VisibleGpus {
  enum class Kind {
    kAll,     // no mask: whatever the driver enumerates
    kListed,  // `ids` (indices or UUIDs); the driver enumerates them as 0..n-1
    kNone,    // masked: `reason` says by what
  };
  Kind kind = Kind::kAll;
  std::vector<std::string> ids;
  std::string reason;
};

// The two variables' values; nullopt when unset. CUDA_VISIBLE_DEVICES is parsed as the CUDA
// runtime does: entries up to the first one that is neither an index nor a GPU-/MIG- UUID.
VisibleGpus ParseVisibleGpus(std::optional<absl::string_view> cuda_visible_devices,
                             std::optional<absl::string_view> nvidia_visible_devices);

// ParseVisibleGpus of this process's environment.
VisibleGpus VisibleGpusFromEnvironment();

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_GPU_PLACEMENT_H_
