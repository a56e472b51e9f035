#include "operator/runtime/manager.h"

#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/resource.h"
#include "operator/runtime/informer.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::runtime {
namespace {

using ::testing::HasSubstr;

int Lists(const testing::FakeKubeClient& client) {
  int lists = 0;
  for (const testing::FakeKubeClient::Action& a : client.actions()) lists += a.verb == "list";
  return lists;
}

// Every case ends Run() by itself: a manager runs until stopped or until something is fatal.
struct ManagerCase {
  std::string name;
  std::function<void(ManagerOptions*, testing::FakeKubeClient*)> arrange;
  absl::StatusCode code;
  std::string message;
  bool informers_started;
  std::string leader_gauge;  // the leader metric's sample once Run() returned
};

TEST(ManagerTest, RunEndsWithAnErrorThatSaysWhatWasFatal) {
  const ManagerCase cases[] = {
      {"AnAddressThatIsNotHostPort",
       [](ManagerOptions* o, testing::FakeKubeClient*) { o->metrics_bind_address = "8080"; },
       absl::StatusCode::kInvalidArgument, "bind address \"8080\" is not host:port", false,
       "leader_election_master_status{name=\"none\"} 0"},
      {"CachesThatNeverSync",
       [](ManagerOptions* o, testing::FakeKubeClient* client) {
         o->cache_sync_timeout = absl::Milliseconds(300);
         client->FailNext("list", "pods", absl::PermissionDeniedError("pods is forbidden"), 1000);
       },
       absl::StatusCode::kDeadlineExceeded, "caches did not sync in time", true,
       "leader_election_master_status{name=\"none\"} 0"},
      {"ALeaseThatCannotBeRenewed",
       [](ManagerOptions* o, testing::FakeKubeClient* client) {
         LeaderElectionConfig election;
         election.namespace_name = "system";
         election.identity = "me";
         election.retry_period = absl::Milliseconds(10);
         election.renew_deadline = absl::Milliseconds(50);
         o->leader_election = election;
         client->FailNext("update", "leases", absl::UnavailableError("etcd is down"), 1000);
       },
       absl::StatusCode::kAborted, "lost the leader lease", true,
       "leader_election_master_status{name=\"disttrain-operator-leader\"} 0"},
  };
  for (const ManagerCase& c : cases) {
    SCOPED_TRACE(c.name);
    testing::FakeKubeClient client;
    ManagerOptions options;
    options.metrics_bind_address = "127.0.0.1:0";
    options.health_probe_bind_address = "127.0.0.1:0";
    c.arrange(&options, &client);
    MetricsRegistry metrics;
    Manager manager(options, &client, &metrics, RealClock::Get());
    Informer pods(&client, {kube::kPods, "ns", ""});
    manager.AddInformer(&pods);

    absl::Status status;
    absl::Notification ended;
    std::thread run([&] {
      status = manager.Run();
      ended.Notify();
    });
    // Bounded: a Run() that goes on fails the case instead of hanging the suite.
    if (!ended.WaitForNotificationWithTimeout(absl::Seconds(10))) {
      ADD_FAILURE() << "Run() did not end by itself";
      manager.RequestStop();
    }
    run.join();
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
    EXPECT_EQ(Lists(client) > 0, c.informers_started);
    EXPECT_THAT(metrics.Render("leader_election"), HasSubstr(c.leader_gauge));
  }
}

}  // namespace
}  // namespace disttrain::runtime
