// The manager owns the informers, controllers, leader elector and the health/metrics servers,
// and runs them in order: servers, informers, wait for cache sync, (leader election), then the
// controllers. Standbys keep warm caches. On stop it lets in-flight reconciles finish, releases
// the lease and stops the informers. Losing the lease ends Run() with an error.
// Thread-safe: Run() on one thread, RequestStop() from any (a signal-handling thread).
#ifndef DISTTRAIN_OPERATOR_RUNTIME_MANAGER_H_
#define DISTTRAIN_OPERATOR_RUNTIME_MANAGER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/http_server.h"
#include "common/metrics.h"
#include "operator/runtime/controller.h"
#include "operator/runtime/informer.h"
#include "operator/runtime/leader_elector.h"
#include "operator/runtime/runnable.h"

namespace disttrain::runtime {

struct ManagerOptions {
  std::string metrics_bind_address = ":8080";
  std::string health_probe_bind_address = ":8081";
  // Empty: no leader election.
  std::optional<LeaderElectionConfig> leader_election;
  absl::Duration cache_sync_timeout = absl::Minutes(2);
};

class Manager {
 public:
  Manager(ManagerOptions options, kube::KubeClient* client, MetricsRegistry* metrics, Clock* clock);

  void AddInformer(Informer* informer);
  void AddController(Controller* controller);
  // Started after the controllers, stopped before them.
  void AddRunnable(Runnable* runnable);

  // Runs until RequestStop() (OK) or a fatal condition: caches that never sync, a server that
  // cannot bind, a lost lease (errors).
  absl::Status Run();
  void RequestStop() { stop_ = true; }

  int metrics_port() const { return metrics_server_.port(); }
  int health_port() const { return health_server_.port(); }

 private:
  bool Synced() const;
  void Shutdown(bool controllers_started);

  const ManagerOptions options_;
  kube::KubeClient* const client_;
  MetricsRegistry* const metrics_;
  Clock* const clock_;
  std::vector<Informer*> informers_;
  std::vector<Controller*> controllers_;
  std::vector<Runnable*> runnables_;
  std::unique_ptr<LeaderElector> elector_;
  HttpServer metrics_server_;
  HttpServer health_server_;
  std::atomic<bool> stop_{false};
  MetricFamily* leader_status_;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_MANAGER_H_
