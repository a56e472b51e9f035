// An in-memory KubeClient for unit tests: objects by resource/namespace/name, resourceVersions
// from a counter, AlreadyExists/NotFound/Conflict like the API server (including the
// resourceVersion precondition of a patch and the UID precondition of a delete), scripted watch
// streams, a record of every request and errors injected into chosen requests. Thread-safe.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_FAKE_KUBE_CLIENT_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_FAKE_KUBE_CLIENT_H_

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "operator/kube/kube_client.h"

namespace disttrain::testing {

class FakeWatchStream : public kube::WatchStream {
 public:
  FakeWatchStream(std::vector<kube::WatchEvent> events, absl::Status end)
      : events_(events.begin(), events.end()), end_(std::move(end)) {}
  bool Next(kube::WatchEvent* e) override {
    absl::MutexLock lock(&mu_);
    if (events_.empty()) {
      status_ = end_;
      return false;
    }
    *e = events_.front();
    events_.pop_front();
    return true;
  }
  void Cancel() override {}
  absl::Status status() const override { return status_; }

 private:
  absl::Mutex mu_;
  std::deque<kube::WatchEvent> events_;
  absl::Status end_, status_;
};

class FakeKubeClient : public kube::KubeClient {
 public:
  // One request as the API server would see it: verb is get, list, create, update, patch,
  // delete or watch; resource the plural.
  struct Action {
    std::string verb, resource, ns, name, subresource;
    std::optional<int64_t> grace_period_seconds = std::nullopt;  // of a delete
  };

  absl::StatusOr<nlohmann::json> Get(const kube::Resource& r, const std::string& ns,
                                     const std::string& name) override;
  absl::StatusOr<kube::ListResult> List(const kube::Resource& r, const std::string& ns,
                                        const kube::ListOptions& options) override;
  absl::StatusOr<nlohmann::json> Create(const kube::Resource& r, const std::string& ns,
                                        const nlohmann::json& object) override;
  absl::StatusOr<nlohmann::json> Update(const kube::Resource& r, const std::string& ns,
                                        const nlohmann::json& object) override;
  absl::StatusOr<nlohmann::json> UpdateStatus(const kube::Resource& r, const std::string& ns,
                                              const nlohmann::json& object) override;
  absl::Status Patch(const kube::Resource& r, const std::string& ns, const std::string& name,
                     kube::PatchType type, const nlohmann::json& patch,
                     const std::string& subresource) override;
  absl::Status Delete(const kube::Resource& r, const std::string& ns, const std::string& name,
                      const kube::DeleteOptions& options) override;
  absl::StatusOr<std::unique_ptr<kube::WatchStream>> Watch(
      const kube::Resource& r, const std::string& ns, const kube::ListOptions& options) override;

  // Queues what the next Watch() call returns (an error, or events then an end status).
  void QueueWatch(absl::StatusOr<std::pair<std::vector<kube::WatchEvent>, absl::Status>> next);
  void Put(const kube::Resource& r, nlohmann::json object);  // stores an object as it is
  // Every object of `r` (all namespaces).
  std::vector<nlohmann::json> Objects(const kube::Resource& r) const;

  // The next `times` requests with this verb on this resource ("" = any) fail with `error`
  // instead of being served.
  void FailNext(std::string verb, std::string resource, absl::Status error, int times = 1);
  // True: deleting a pod marks it terminating (deletionTimestamp) as a grace period would; a
  // second delete, or one with grace period 0, removes it. Objects with finalizers are always kept
  // until they are removed.
  void SetDeleteGraceful(bool graceful) {
    absl::MutexLock lock(&mu_);
    graceful_ = graceful;
  }
  std::vector<Action> actions() const;
  void ClearActions();

 private:
  static std::string Key(const kube::Resource& r, const std::string& ns, const std::string& name);
  // Records the request; returns the injected error, if one matches.
  absl::Status Begin(std::string verb, const kube::Resource& r, const std::string& ns,
                     const std::string& name, const std::string& subresource = "")
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Failure {
    std::string verb, resource;
    absl::Status error;
    int times;
  };
  std::vector<Action> actions_ ABSL_GUARDED_BY(mu_);
  bool graceful_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Failure> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> created_ ABSL_GUARDED_BY(mu_);  // creations per key, for fresh UIDs

  mutable absl::Mutex mu_;
  std::map<std::string, nlohmann::json> objects_ ABSL_GUARDED_BY(mu_);
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 100;
  std::deque<absl::StatusOr<std::pair<std::vector<kube::WatchEvent>, absl::Status>>> watches_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_FAKE_KUBE_CLIENT_H_
