// Kubernetes Events about an object, as `kubectl describe` shows them. Best effort: a failure
// to record is logged, never returned. Implementations are thread-safe.
//
// KubeEventRecorder aggregates as the Kubernetes event recorder does: the same event (involved
// object, type, reason and message) recorded again within kAggregationWindow patches the first
// one's count and lastTimestamp ("x5 over 3m" in kubectl describe) instead of creating another.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_EVENT_RECORDER_H_
#define DISTTRAIN_OPERATOR_RUNTIME_EVENT_RECORDER_H_

#include <deque>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "nlohmann/json.hpp"
#include "operator/kube/kube_client.h"

namespace disttrain::runtime {

enum class EventType { kNormal, kWarning };

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `object` is the involved object (apiVersion, kind and metadata are read from it).
  virtual void Record(const nlohmann::json& object, EventType type, const std::string& reason,
                      const std::string& message) = 0;
};

class KubeEventRecorder : public EventRecorder {
 public:
  static constexpr absl::Duration kAggregationWindow = absl::Minutes(10);
  static constexpr size_t kMaxRemembered = 4096;  // oldest forgotten first

  KubeEventRecorder(kube::KubeClient* client, std::string component, Clock* clock);
  void Record(const nlohmann::json& object, EventType type, const std::string& reason,
              const std::string& message) override;

 private:
  struct Seen {
    std::string name;  // the Event object
    int count = 0;
    absl::Time last;
  };
  // Creates the Event and remembers it under `key` with count 1.
  void Create(const nlohmann::json& object, EventType type, const std::string& reason,
              const std::string& message, const std::string& key);

  kube::KubeClient* const client_;
  const std::string component_;
  Clock* const clock_;
  absl::Mutex mu_;
  std::map<std::string, Seen> seen_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);  // keys of seen_, oldest first
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_EVENT_RECORDER_H_
