#include "operator/runtime/leader_elector.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "operator/kube/errors.h"

namespace disttrain::runtime {
namespace {

std::string MicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

bool SleepOrStop(const std::atomic<bool>& stop, absl::Duration d) {
  absl::Time end = absl::Now() + d;
  while (!stop && absl::Now() < end)
    absl::SleepFor(std::min(absl::Milliseconds(50), end - absl::Now()));
  return !stop;
}

}  // namespace

LeaderElector::LeaderElector(kube::KubeClient* client, LeaderElectionConfig config, Clock* clock)
    : client_(client), config_(std::move(config)), clock_(clock) {}

nlohmann::json LeaderElector::LeaseSpec(const nlohmann::json& old_spec, bool renewing) const {
  const absl::Time now = clock_->Now();
  nlohmann::json spec = old_spec.is_object() ? old_spec : nlohmann::json::object();
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = absl::ToInt64Seconds(config_.lease_duration);
  spec["renewTime"] = MicroTime(now);
  if (!renewing) {
    spec["acquireTime"] = MicroTime(now);
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + (old_spec.is_object() ? 1 : 0);
  }
  return spec;
}

bool LeaderElector::TryAcquireOrRenew() {
  const kube::Resource& leases = kube::kLeases;
  absl::StatusOr<nlohmann::json> lease = client_->Get(leases, config_.namespace_name, config_.name);
  if (kube::IsNotFound(lease.status())) {
    nlohmann::json obj = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", config_.name}, {"namespace", config_.namespace_name}}},
        {"spec", LeaseSpec(nullptr, false)}};
    absl::StatusOr<nlohmann::json> created = client_->Create(leases, config_.namespace_name, obj);
    if (!created.ok()) {
      LogDebug("lease create failed", {{"error", created.status().ToString()}});
      return false;
    }
    absl::MutexLock lock(&mu_);
    observed_record_ = (*created)["spec"].dump();
    observed_time_ = clock_->Now();
    return true;
  }
  if (!lease.ok()) {
    LogWarning("cannot read the leader lease", {{"error", lease.status().ToString()}});
    return false;
  }
  const nlohmann::json spec = lease->value("spec", nlohmann::json::object());
  const std::string holder = spec.value("holderIdentity", "");
  const absl::Time now = clock_->Now();
  {
    absl::MutexLock lock(&mu_);
    std::string record = spec.dump();
    if (record != observed_record_) {
      observed_record_ = record;
      observed_time_ = now;
    }
    absl::Duration duration = absl::Seconds(spec.value("leaseDurationSeconds", 15));
    if (!holder.empty() && holder != config_.identity && observed_time_ + duration > now) {
      return false;  // someone else holds a lease we have seen renewed recently
    }
  }
  nlohmann::json updated = *lease;
  updated["spec"] = LeaseSpec(spec, holder == config_.identity);
  absl::StatusOr<nlohmann::json> result = client_->Update(leases, config_.namespace_name, updated);
  if (!result.ok()) {
    LogDebug("lease update failed", {{"error", result.status().ToString()}});
    return false;
  }
  absl::MutexLock lock(&mu_);
  observed_record_ = (*result)["spec"].dump();
  observed_time_ = clock_->Now();
  return true;
}

bool LeaderElector::Acquire(const std::atomic<bool>& stop) {
  LogInfo("waiting to acquire the leader lease",
          {{"lease", config_.namespace_name + "/" + config_.name}, {"identity", config_.identity}});
  while (!stop) {
    if (TryAcquireOrRenew()) {
      is_leader_ = true;
      LogInfo("acquired the leader lease", {{"identity", config_.identity}});
      return true;
    }
    if (!SleepOrStop(stop, config_.retry_period)) break;
  }
  return false;
}

bool LeaderElector::KeepRenewing(const std::atomic<bool>& stop) {
  absl::Time last_renew = clock_->Now();
  while (SleepOrStop(stop, config_.retry_period)) {
    if (TryAcquireOrRenew()) {
      last_renew = clock_->Now();
      continue;
    }
    if (clock_->Now() - last_renew > config_.renew_deadline) {
      is_leader_ = false;
      LogError("lost the leader lease", {{"identity", config_.identity}});
      return false;
    }
  }
  return true;
}

void LeaderElector::Release() {
  if (!is_leader_.exchange(false)) return;
  absl::StatusOr<nlohmann::json> lease =
      client_->Get(kube::kLeases, config_.namespace_name, config_.name);
  if (!lease.ok() || lease->value("/spec/holderIdentity"_json_pointer, "") != config_.identity)
    return;
  nlohmann::json updated = *lease;
  updated["spec"]["holderIdentity"] = "";
  updated["spec"]["leaseDurationSeconds"] = 1;
  updated["spec"]["renewTime"] = MicroTime(clock_->Now());
  absl::StatusOr<nlohmann::json> r =
      client_->Update(kube::kLeases, config_.namespace_name, updated);
  if (r.ok()) {
    LogInfo("released the leader lease", {{"identity", config_.identity}});
  } else {
    LogWarning("could not release the leader lease", {{"error", r.status().ToString()}});
  }
}

}  // namespace disttrain::runtime
