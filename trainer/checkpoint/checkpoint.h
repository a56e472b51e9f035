// Checkpoints of the model's variables in --model-dir: "ckpt-<global step>.bin", written to a
// temporary file and renamed into place (readers never see half a file), checksummed (CRC-32),
// the last K kept. Reading skips corrupt files and falls back to the previous one.
// Functions are thread-safe for different directories.
#ifndef DISTTRAIN_TRAINER_CHECKPOINT_CHECKPOINT_H_
#define DISTTRAIN_TRAINER_CHECKPOINT_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/models/model.h"

namespace disttrain::trainer {

struct Checkpoint {
  int64_t global_step = 0;
  std::vector<VariableSpec> variables;
  Params values;
  std::string path;
  bool final = false;  // the chief's last checkpoint (a snapshot's header says so)
};

absl::Status WriteCheckpoint(const std::string& dir, int64_t global_step,
                             const std::vector<VariableSpec>& variables, const Params& values,
                             int keep);

// The newest checkpoint that reads back intact (NotFound when there is none). `skipped` gets
// the corrupt files passed over.
absl::StatusOr<Checkpoint> LatestCheckpoint(const std::string& dir,
                                            std::vector<std::string>* skipped = nullptr);

absl::StatusOr<Checkpoint> ReadCheckpoint(const std::string& path);

// Global steps of the checkpoint files present, newest first (intact or not).
std::vector<int64_t> CheckpointSteps(const std::string& dir);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_CHECKPOINT_CHECKPOINT_H_
