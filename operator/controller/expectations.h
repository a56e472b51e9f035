// What the reconciler remembers between passes (the Kubernetes controllers' "expectations"):
// what this process did that the informers' caches may not show yet, and what a job's next pass
// needs from its last one. One object, one lock; a job's entries go when it is deleted
// (JobGone), a pod's when the informer sees it gone (PodGone), so nothing grows with the jobs
// that came and went. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_EXPECTATIONS_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_EXPECTATIONS_H_

#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace disttrain::controller {

class Expectations {
 public:
  // Pods this process deleted, until the informer sees them gone: a stale cache must not make
  // the operator delete them again.
  void Deleting(const std::string& pod_uid);
  bool IsDeleting(const std::string& pod_uid) const;
  void PodGone(const std::string& pod_uid);

  // Pods and Services (by "pods/namespace/name", "services/namespace/name") this process is
  // creating or created, until the informers show them: a pass from a cache that lags behind
  // this process's own creates must not create them again (the API server would answer 409
  // AlreadyExists: a write's cost for nothing). Recorded before the request; an entry older
  // than `limit` no longer counts (the informer may have missed it) and is dropped.
  void Creating(const std::string& object_key, absl::Time now);
  bool IsCreating(const std::string& object_key, absl::Time now, absl::Duration limit);
  // The informer shows it (or it is gone, or its create failed).
  void Seen(const std::string& object_key);

  // Passes in a row whose pod or Service creation failed, for job `key` (namespace/name) of UID
  // `uid` (a job recreated under the same name starts again from zero). Returns the new count.
  int CreateFailed(const std::string& key, const std::string& uid);
  void CreatedAll(const std::string& key);

  // The job's last successful status write replaced resourceVersion `rv` at `when`: a pass that
  // still finds `rv` cached is behind its own write, for at most `limit` (then a 409 will tell).
  void WroteStatus(const std::string& key, const std::string& uid, const std::string& rv,
                   absl::Time when);
  bool BehindOwnWrite(const std::string& key, const std::string& cached_rv, absl::Time now,
                      absl::Duration limit);

  // A new job's first pass left its status write to the next pass: when it ran, for the start
  // time that pass writes. FirstPassTime is `now` for a job without one (or another UID).
  void FirstWriteWaits(const std::string& key, const std::string& uid, absl::Time started);
  absl::Time FirstPassTime(const std::string& key, const std::string& uid, absl::Time now) const;
  void FirstWriteDone(const std::string& key);

  // The job's status differs from the stored one in pod counts only, and its write is held back
  // (JobReconciler::CountsWriteWaits): since when. The first call records `now`; WroteStatus
  // and CountsCurrent end the wait.
  absl::Time CountsWaitSince(const std::string& key, const std::string& uid, absl::Time now);
  void CountsCurrent(const std::string& key);

  // A running job's PodGroup whose update to the job's latest spec failed: updated again by the
  // next passes until one succeeds (`behind` false then).
  void PodGroupBehind(const std::string& key, const std::string& uid, bool behind);
  bool IsPodGroupBehind(const std::string& key, const std::string& uid) const;

  // A finished job's PodGroup, deleted once per job and process.
  void PodGroupDeleted(const std::string& key, const std::string& uid);
  bool IsPodGroupDeleted(const std::string& key, const std::string& uid) const;

  // The finished job's Workload (by its UID) whose in-use finalizer this process removed: a
  // pass from a cache that shows it Finished but not yet released must not remove it again.
  void WorkloadReleased(const std::string& key, const std::string& uid,
                        const std::string& workload_uid);
  bool IsWorkloadReleased(const std::string& key, const std::string& uid,
                          const std::string& workload_uid) const;

  // Job `key` was deleted: everything remembered of it goes.
  void JobGone(const std::string& key);

  // Jobs and pods with something remembered (tests: nothing is kept past its job or pod).
  size_t jobs() const;
  size_t pods() const;
  size_t creating() const;

 private:
  struct Job {
    std::string uid;
    int create_failures = 0;
    std::string replaced_rv;  // empty: no write to catch up with
    absl::Time replaced_at;
    std::optional<absl::Time> first_pass;      // when its first pass ran, while its write waits
    std::optional<absl::Time> counts_waiting;  // since when a counts-only write is held back
    bool pod_group_deleted = false;
    bool pod_group_behind = false;
    std::string released_workload;  // UID
    bool empty() const {
      return create_failures == 0 && replaced_rv.empty() && !first_pass && !counts_waiting &&
             !pod_group_deleted && !pod_group_behind && released_workload.empty();
    }
  };
  // The entry of job `key` as UID `uid`: reset when the name now belongs to another job.
  Job& Entry(const std::string& key, const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PruneIfEmpty(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::set<std::string> deleting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> creating_ ABSL_GUARDED_BY(mu_);
  size_t creates_since_sweep_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);  // by namespace/name
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_EXPECTATIONS_H_
