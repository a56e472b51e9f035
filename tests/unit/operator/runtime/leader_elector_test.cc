#include "operator/runtime/leader_elector.h"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "operator/kube/resource.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::runtime {
namespace {

using nlohmann::json;

LeaderElectionConfig Config(const std::string& identity) {
  LeaderElectionConfig config;
  config.namespace_name = "system";
  config.identity = identity;
  return config;
}

// The lease as another process left it; its renewTime is long past on purpose: a candidate
// measures a holder's silence on its own clock, never against another node's.
json Lease(const std::string& holder, int duration_seconds) {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", "disttrain-operator-leader"}, {"namespace", "system"}}},
          {"spec",
           {{"holderIdentity", holder},
            {"leaseDurationSeconds", duration_seconds},
            {"acquireTime", "2020-01-01T00:00:00.000000Z"},
            {"renewTime", "2020-01-01T00:00:00.000000Z"},
            {"leaseTransitions", 3}}}};
}

json StoredLeaseSpec(const testing::FakeKubeClient& client) {
  std::vector<json> leases = client.Objects(kube::kLeases);
  return leases.size() == 1 ? leases[0]["spec"] : json();
}

struct LeaseCase {
  std::string name;
  std::optional<json> lease;  // the lease found at the start, if any
  absl::Duration between;     // on the candidate's clock, between its two attempts
  bool first, second;         // what the two attempts return
  std::string holder;         // after them
  int transitions;
};

TEST(LeaderElectorTest, TakesTheLeaseOnlyWhenNoOneElseHoldsIt) {
  const LeaseCase cases[] = {
      {"CreatesTheLeaseWhenThereIsNone", std::nullopt, absl::Seconds(2), true, true, "me", 0},
      {"WaitsWhileAnotherHoldersLeaseRuns", Lease("other", 15), absl::Seconds(14), false, false,
       "other", 3},
      {"TakesALeaseNotRenewedForItsDuration", Lease("other", 15), absl::Seconds(16), false, true,
       "me", 4},
      {"TakesAReleasedLeaseAtOnce", Lease("", 1), absl::ZeroDuration(), true, true, "me", 4},
      {"RenewsItsOwnLeaseWithoutATransition", Lease("me", 15), absl::Seconds(2), true, true, "me",
       3},
  };
  for (const LeaseCase& c : cases) {
    SCOPED_TRACE(c.name);
    testing::FakeKubeClient client;
    if (c.lease) client.Put(kube::kLeases, *c.lease);
    FakeClock clock;
    LeaderElector elector(&client, Config("me"), &clock);
    EXPECT_EQ(elector.TryAcquireOrRenew(), c.first);
    clock.Advance(c.between);
    EXPECT_EQ(elector.TryAcquireOrRenew(), c.second);
    const json spec = StoredLeaseSpec(client);
    EXPECT_EQ(spec.value("holderIdentity", "?"), c.holder);
    EXPECT_EQ(spec.value("leaseTransitions", -1), c.transitions);
    if (c.holder == "me") {
      EXPECT_EQ(spec.value("renewTime", ""),
                absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", clock.Now(), absl::UTCTimeZone()));
    }
  }
}

TEST(LeaderElectorTest, ReleaseHandsTheLeaseToAStandbyAtOnce) {
  testing::FakeKubeClient client;
  FakeClock clock;
  LeaderElector leader(&client, Config("leader"), &clock);
  LeaderElector standby(&client, Config("standby"), &clock);
  const std::atomic<bool> stop{false};
  ASSERT_TRUE(leader.Acquire(stop));
  EXPECT_TRUE(leader.IsLeader());
  EXPECT_FALSE(standby.TryAcquireOrRenew());

  leader.Release();
  EXPECT_FALSE(leader.IsLeader());
  EXPECT_TRUE(standby.TryAcquireOrRenew()) << "no lease duration to wait out on the same clock";
  EXPECT_EQ(StoredLeaseSpec(client).value("holderIdentity", ""), "standby");

  // A process that never led leaves the lease alone: not even a read.
  client.ClearActions();
  leader.Release();
  EXPECT_TRUE(client.actions().empty());
  EXPECT_EQ(StoredLeaseSpec(client).value("holderIdentity", ""), "standby");
}

}  // namespace
}  // namespace disttrain::runtime
