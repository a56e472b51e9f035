#include "operator/runtime/manager.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"

namespace disttrain::runtime {

Manager::Manager(ManagerOptions options, kube::KubeClient* client, MetricsRegistry* metrics,
                 Clock* clock)
    : options_(std::move(options)),
      client_(client),
      metrics_(metrics),
      clock_(clock),
      leader_status_(metrics->Gauge("leader_election_master_status",
                                    "Gauge of if the reporting system is master of the relevant "
                                    "lease, 0 indicates backup, 1 indicates master.",
                                    {"name"})) {}

void Manager::AddInformer(Informer* informer) { informers_.push_back(informer); }
void Manager::AddController(Controller* controller) { controllers_.push_back(controller); }
void Manager::AddRunnable(Runnable* runnable) { runnables_.push_back(runnable); }

bool Manager::Synced() const {
  for (const Informer* i : informers_) {
    if (!i->HasSynced()) return false;
  }
  return true;
}

absl::Status Manager::Run() {
  const std::string lease_name =
      options_.leader_election ? options_.leader_election->name : std::string("none");
  leader_status_->Set({lease_name}, 0);  // visible as "not leader" from the first scrape
  metrics_server_.Handle("/metrics", [this] {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics_->Render()};
  });
  health_server_.Handle("/healthz", [] {
    return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
  });
  health_server_.Handle("/readyz", [this] {
    return Synced() ? HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}
                    : HttpResponse{503, "text/plain; charset=utf-8", "caches not synced\n"};
  });
  if (absl::Status s = metrics_server_.Start(options_.metrics_bind_address); !s.ok()) return s;
  if (absl::Status s = health_server_.Start(options_.health_probe_bind_address); !s.ok()) return s;
  LogInfo("serving", {{"metrics_port", absl::StrCat(metrics_server_.port())},
                      {"health_port", absl::StrCat(health_server_.port())}});

  for (Informer* i : informers_) i->Start();
  const absl::Time deadline = absl::Now() + options_.cache_sync_timeout;
  while (!Synced() && !stop_) {
    if (absl::Now() > deadline) {
      Shutdown(false);
      return absl::DeadlineExceededError(
          "caches did not sync in time (can the operator list its resources?)");
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (stop_) {
    Shutdown(false);
    return absl::OkStatus();
  }
  LogInfo("caches synced", {{"informers", absl::StrCat(informers_.size())}});

  if (options_.leader_election) {
    elector_ = std::make_unique<LeaderElector>(client_, *options_.leader_election, clock_);
    if (!elector_->Acquire(stop_)) {
      Shutdown(false);
      return absl::OkStatus();
    }
  }
  leader_status_->Set({lease_name}, 1);
  for (Controller* c : controllers_) c->Start();
  for (Runnable* r : runnables_) r->Start();

  absl::Status result;
  if (elector_) {
    if (!elector_->KeepRenewing(stop_)) {
      result = absl::AbortedError("lost the leader lease");
      leader_status_->Set({lease_name}, 0);
    }
  } else {
    while (!stop_) absl::SleepFor(absl::Milliseconds(50));
  }
  Shutdown(true);
  return result;
}

void Manager::Shutdown(bool controllers_started) {
  if (controllers_started) {
    for (Runnable* r : runnables_) r->Stop();
    LogInfo("stopping controllers; in-flight reconciles finish first");
    for (Controller* c : controllers_) c->Stop();
  }
  if (elector_) elector_->Release();
  for (Informer* i : informers_) i->Stop();
  health_server_.Stop();
  metrics_server_.Stop();
  LogInfo("manager stopped");
}

}  // namespace disttrain::runtime
