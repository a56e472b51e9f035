// Kubernetes Events about an object, as `kubectl describe` shows them. Best effort: a failure
// to record is logged, never returned. Implementations are thread-safe.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_EVENT_RECORDER_H_
#define DISTTRAIN_OPERATOR_RUNTIME_EVENT_RECORDER_H_

#include <string>

#include "nlohmann/json.hpp"
#include "operator/kube/kube_client.h"
#include "operator/runtime/clock.h"

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
  KubeEventRecorder(kube::KubeClient* client, std::string component, Clock* clock);
  void Record(const nlohmann::json& object, EventType type, const std::string& reason,
              const std::string& message) override;

 private:
  kube::KubeClient* const client_;
  const std::string component_;
  Clock* const clock_;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_EVENT_RECORDER_H_
