// Machine-readable progress: one JSON object per line on stdout ({"event":"step",...},
// {"event":"eval",...}, {"event":"checkpoint",...}). Human-readable logs go to stderr.
// Thread-safe.
#ifndef DISTTRAIN_TRAINER_EVENTS_H_
#define DISTTRAIN_TRAINER_EVENTS_H_

#include <cstdio>
#include <mutex>

#include "nlohmann/json.hpp"

namespace disttrain::trainer {

inline void EmitEvent(const nlohmann::json& event) {
  static std::mutex mu;
  std::string line = event.dump() + "\n";
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_EVENTS_H_
