// The training replicas a parameter server counts as live, so synchronous training aggregates
// the gradients of the workers that are there (issue #37: workers scaled in or out of a running
// job). A replica is known by the task name its calls carry ("chief-0", "worker-3"):
// - it joins with its first push (a pull alone, e.g. the evaluator's or a new worker's first one,
//   joins nothing);
// - every call of a member renews it: pushes, the pulls of a synchronous wait, the Describe calls
//   of a replica waiting for the chief to restore the servers;
// - it leaves when it says so (the worker's Leave call on SIGTERM, as a scaled-down pod gets), or
//   when it stayed silent for `timeout` while the job was active (a lost pod).
// Silence is counted only while the job is active: until kActiveWindow (or half the timeout, if
// shorter) after any member's last call. When the whole job pauses (an image pull before the
// first step, every replica waiting for a restarted server) nobody's silence grows past that, and
// when it resumes each member has the rest of the timeout to be heard. The replicas of TF_CONFIG
// are members from the start, so the first steps wait for every one. Pure: the caller passes the
// time. Not thread-safe (the server guards it).
#ifndef DISTTRAIN_TRAINER_PS_MEMBERSHIP_H_
#define DISTTRAIN_TRAINER_PS_MEMBERSHIP_H_

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace disttrain::trainer {

class Membership {
 public:
  // `initial`: the training replicas TF_CONFIG lists. `timeout`: active silence after which a
  // member is gone; absl::InfiniteDuration() keeps members until they leave.
  Membership(const std::vector<std::string>& initial, absl::Duration timeout);

  // A call from `replica`; `push`: it carries a gradient. True when the live count changed.
  bool Seen(const std::string& replica, bool push);
  // `replica` left the job. True when the live count changed.
  bool Leave(const std::string& replica);
  // Call periodically (the server: every 100 ms): adds the time since the last call to the
  // silence of every member not heard from since, if the job is active; drops the members
  // silent for longer than the timeout and returns their names.
  std::vector<std::string> Expire(absl::Time now);

  int live() const { return static_cast<int>(members_.size()); }

  static constexpr absl::Duration kActiveWindow = absl::Seconds(5);

 private:
  struct Member {
    absl::Duration silent;  // counted over active intervals only
    bool heard = false;     // since the last Expire()
  };
  const absl::Duration timeout_;
  std::map<std::string, Member> members_;
  bool active_ = false;                            // some member called since the last Expire()
  absl::Time last_active_ = absl::InfinitePast();  // the last Expire() that found active_
  absl::Time last_expire_ = absl::InfinitePast();
};

// The gradients a synchronous step averages: with `every_replica` (--replicas-to-aggregate 0),
// one per live replica; otherwise `configured`, or fewer when fewer replicas live (the rest of the
// configured replicas are backups). At least 1.
int Quorum(int live, int configured, bool every_replica);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_MEMBERSHIP_H_
