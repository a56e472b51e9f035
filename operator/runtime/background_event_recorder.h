// Records events off the reconcile path, as client-go's event broadcaster does: Record() queues
// the event and returns; one thread hands the queue, in order, to the wrapped recorder (which
// makes the API calls). A pass no longer waits a round trip per event. Best effort like every
// recorder: when kCapacity events are waiting, new ones are dropped (and counted in a log line);
// events still queued when the recorder is destroyed are dropped. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_BACKGROUND_EVENT_RECORDER_H_
#define DISTTRAIN_OPERATOR_RUNTIME_BACKGROUND_EVENT_RECORDER_H_

#include <deque>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "operator/runtime/event_recorder.h"

namespace disttrain::runtime {

class BackgroundEventRecorder : public EventRecorder {
 public:
  static constexpr size_t kCapacity = 1000;  // client-go's queue length

  explicit BackgroundEventRecorder(EventRecorder* inner, size_t capacity = kCapacity);
  ~BackgroundEventRecorder() override;

  void Record(const nlohmann::json& object, EventType type, const std::string& reason,
              const std::string& message) override;
  // Waits until every event queued so far was handed to the inner recorder (tests).
  void Flush();

 private:
  struct Pending {
    nlohmann::json object;  // apiVersion, kind and the metadata an event names
    EventType type;
    std::string reason, message;
  };
  void Loop();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); }
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !busy_; }

  EventRecorder* const inner_;
  const size_t capacity_;
  absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  size_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_BACKGROUND_EVENT_RECORDER_H_
