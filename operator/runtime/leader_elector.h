// Leader election with a coordination.k8s.io/v1 Lease, as client-go does it: the holder renews
// every retry period; a candidate takes the lease once it has seen no renewal for a whole lease
// duration (measured on its own clock, so clock skew between nodes does not matter); a holder
// that cannot renew within the renew deadline has lost. Release() hands the lease back on a
// clean shutdown so a standby takes over at once. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_LEADER_ELECTOR_H_
#define DISTTRAIN_OPERATOR_RUNTIME_LEADER_ELECTOR_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "nlohmann/json.hpp"
#include "operator/kube/kube_client.h"

namespace disttrain::runtime {

struct LeaderElectionConfig {
  std::string namespace_name;
  std::string name = "disttrain-operator-leader";
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

class LeaderElector {
 public:
  LeaderElector(kube::KubeClient* client, LeaderElectionConfig config, Clock* clock);

  // Blocks until this process holds the lease (true) or `stop` becomes true (false).
  bool Acquire(const std::atomic<bool>& stop);
  // Blocks renewing the lease until `stop` becomes true (returns true) or a renewal fails past
  // the renew deadline (returns false: leadership is lost).
  bool KeepRenewing(const std::atomic<bool>& stop);
  // Gives the lease up (best effort).
  void Release();

  // One attempt to take or renew the lease. Exposed for tests.
  bool TryAcquireOrRenew();
  bool IsLeader() const { return is_leader_.load(); }

 private:
  nlohmann::json LeaseSpec(const nlohmann::json& old_spec, bool renewing) const;

  kube::KubeClient* const client_;
  const LeaderElectionConfig config_;
  Clock* const clock_;
  std::atomic<bool> is_leader_{false};
  absl::Mutex mu_;
  std::string observed_record_ ABSL_GUARDED_BY(mu_);
  absl::Time observed_time_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_LEADER_ELECTOR_H_
