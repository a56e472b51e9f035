// A bound on the API requests one client has in flight at once, across every thread using it.
// Each request in flight holds one keep-alive connection (HTTP/1.1) and its TLS context, so the
// bound is also the client's connection count (watches aside). With a shared bound, reconcile
// workers that are between requests (a job's first replica, its status write) leave their share
// to the others instead of idling it, as client-go's one HTTP/2 connection does. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_KUBE_IN_FLIGHT_LIMIT_H_
#define DISTTRAIN_OPERATOR_KUBE_IN_FLIGHT_LIMIT_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace disttrain::kube {

class InFlightLimit {
 public:
  // limit <= 0: no bound (Acquire never waits).
  explicit InFlightLimit(int limit) : limit_(limit) {}

  // Waits for a free slot. A caller must hold no other slot while it waits, or callers that each
  // hold some could wait for each other forever; one that holds slots uses TryAcquire.
  void Acquire();
  // Takes a slot if one is free and nobody waits in Acquire: a freed slot goes to a waiter first,
  // so a lone request (a lease renewal, a status write) never starves behind batches that keep
  // their slots busy.
  bool TryAcquire();
  void Release();

  int in_flight() const;
  int waiting() const;  // callers blocked in Acquire

 private:
  const int limit_;
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_IN_FLIGHT_LIMIT_H_
