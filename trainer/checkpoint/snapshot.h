// Checkpoints over gRPC, so an evaluator needs no volume shared with the chief: the chief
// publishes each checkpoint it writes to ps 0 (PutSnapshot), which keeps the newest one in memory
// (SnapshotSlot), and the evaluator long-polls it (GetSnapshot). The parts on the wire are a
// SnapshotHeader, then each variable's values as TensorChunks of at most 512 KiB, in order.
// SnapshotSlot is thread-safe; the functions are thread-compatible per stub.
#ifndef DISTTRAIN_TRAINER_CHECKPOINT_SNAPSHOT_H_
#define DISTTRAIN_TRAINER_CHECKPOINT_SNAPSHOT_H_

#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "disttrain/trainer/v1/parameter_server.grpc.pb.h"
#include "trainer/checkpoint/checkpoint.h"

namespace disttrain::trainer {

// Calls `emit` for every part of `snapshot` (false from emit stops it: the stream broke).
bool WriteSnapshotParts(const Checkpoint& snapshot,
                        const std::function<bool(const v1::SnapshotPart&)>& emit);

// Rebuilds a snapshot from its parts, checking that every element arrives once, in order.
class SnapshotReader {
 public:
  absl::Status Add(const v1::SnapshotPart& part);
  // InvalidArgument when parts are missing.
  absl::StatusOr<Checkpoint> Finish();

 private:
  bool has_header_ = false;
  Checkpoint snapshot_;
  size_t variable_ = 0;  // the variable being filled
  size_t filled_ = 0;    // its elements so far
};

// The newest snapshot a server holds, and whether an evaluator has fetched it.
class SnapshotSlot {
 public:
  void Put(std::shared_ptr<const Checkpoint> snapshot);
  // The newest snapshot once its step is above `after_step`, or null at `deadline` or Close().
  std::shared_ptr<const Checkpoint> WaitNewer(int64_t after_step, absl::Time deadline);
  // A reader received every part of the snapshot at `step`.
  void Delivered(int64_t step);
  // WaitNewer calls blocked now (tests observe a fetch that waits).
  int waiting() const;
  // A reader asked for a snapshot: an evaluator follows this server.
  void Asked();
  bool asked() const;
  // Until the newest snapshot, when it is the chief's final one, has been delivered (or
  // `deadline`, or Close()): what a server stopping on SIGTERM waits for, so that stopping
  // the job never takes the final evaluation with it.
  enum class FinalState { kNone, kDelivered, kNotFetched };
  FinalState AwaitFinalDelivered(absl::Time deadline);
  void Close();

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Checkpoint> newest_ ABSL_GUARDED_BY(mu_);
  int64_t delivered_step_ ABSL_GUARDED_BY(mu_) = -1;
  bool asked_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::Status PublishSnapshot(v1::ParameterServer::StubInterface* stub, const Checkpoint& snapshot);
// NotFound when no snapshot above `after_step` arrived within `wait`.
absl::StatusOr<Checkpoint> FetchSnapshot(v1::ParameterServer::StubInterface* stub,
                                         int64_t after_step, absl::Duration wait);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_CHECKPOINT_SNAPSHOT_H_
