// Where a chief or worker stands between two exchanges with the parameter servers: whether a
// gradient waits to be pushed and at which step it was computed, which global step the next
// pull waits for (synchronous schemes: the aggregate of this replica's last push), and which
// server incarnations it trained against (a restarted server was restored from a checkpoint,
// so training resumes at the restored step). Pure: no I/O, no clock; Replica::Run asks it what
// to send and what each reply means. Not thread-safe: one replica's loop owns it.
#ifndef DISTTRAIN_TRAINER_WORKER_STEP_TRACKER_H_
#define DISTTRAIN_TRAINER_WORKER_STEP_TRACKER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace disttrain::trainer {

class StepTracker {
 public:
  explicit StepTracker(bool sync) : sync_(sync) {}

  // The next PushPull call. A waiting gradient goes with it and is then never pushed again,
  // whatever the call's outcome: after a failure it may or may not have been applied.
  struct Call {
    bool push = false;
    int64_t step = 0;      // the step the pushed gradient was computed at
    int64_t min_step = 0;  // the pull waits for the servers to reach it (synchronous)
  };
  Call Begin();

  struct Verdict {
    bool train = false;             // false: the step's aggregate is not applied yet; call again
    int64_t step = 0;               // the global step of the pulled values, to train at
    bool new_incarnations = false;  // first reply, or a server restarted: reset the scheme
    bool restarted = false;         // a server restarted since the last reply
  };
  // What the reply to the last Begin() means: its global step, whether the servers dropped the
  // push as stale, and the servers' incarnations (by server and partition).
  Verdict Reply(int64_t global_step, bool dropped, const std::vector<std::string>& incarnations);

  // A gradient computed at `step` waits for the next call; the pull after it waits for step + 1.
  void Computed(int64_t step);

  // The servers were found initialised again after a failure: nothing waits to be pushed, and
  // the next reply's incarnations are taken as they come.
  void Reconnected();

 private:
  const bool sync_;
  bool pending_ = false;
  bool pushed_ = false;  // the last call carried a gradient
  int64_t grad_step_ = 0;
  int64_t want_ = 0;
  std::vector<std::string> incarnations_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_STEP_TRACKER_H_
