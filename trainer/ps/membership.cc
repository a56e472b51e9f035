#include "trainer/ps/membership.h"

#include <algorithm>

namespace disttrain::trainer {

Membership::Membership(const std::vector<std::string>& initial, absl::Duration timeout)
    : timeout_(timeout) {
  for (const std::string& r : initial) members_[r] = Member{absl::ZeroDuration()};
}

bool Membership::Seen(const std::string& replica, bool push) {
  auto it = members_.find(replica);
  const bool joined = it == members_.end();
  if (joined) {
    if (!push) return false;
    it = members_.emplace(replica, Member{absl::ZeroDuration()}).first;
  }
  it->second.silent = absl::ZeroDuration();
  it->second.heard = true;
  active_ = true;
  return joined;
}

bool Membership::Leave(const std::string& replica) { return members_.erase(replica) > 0; }

std::vector<std::string> Membership::Expire(absl::Time now) {
  std::vector<std::string> gone;
  const absl::Duration interval =
      last_expire_ == absl::InfinitePast() ? absl::ZeroDuration() : now - last_expire_;
  if (active_) last_active_ = now;
  // Synchronous replicas waiting for a step call every few seconds (their pulls' deadline): the
  // job is active until kActiveWindow after the last call, or half the timeout if shorter.
  const bool active = now - last_active_ <= std::min(kActiveWindow, timeout_ / 2);
  for (auto it = members_.begin(); it != members_.end();) {
    Member& m = it->second;
    if (active && !m.heard) m.silent += interval;
    m.heard = false;
    if (timeout_ != absl::InfiniteDuration() && m.silent > timeout_) {
      gone.push_back(it->first);
      it = members_.erase(it);
    } else {
      ++it;
    }
  }
  active_ = false;
  last_expire_ = now;
  return gone;
}

int Quorum(int live, int configured, bool every_replica) {
  return std::max(1, every_replica ? live : std::min(configured, live));
}

}  // namespace disttrain::trainer
