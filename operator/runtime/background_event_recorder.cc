#include "operator/runtime/background_event_recorder.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace disttrain::runtime {

BackgroundEventRecorder::BackgroundEventRecorder(EventRecorder* inner, size_t capacity)
    : inner_(inner), capacity_(capacity), thread_([this] { Loop(); }) {}

BackgroundEventRecorder::~BackgroundEventRecorder() {
  size_t left = 0;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    left = queue_.size();
    queue_.clear();
  }
  thread_.join();
  if (left > 0) LogInfo("events not recorded at shutdown", {{"events", absl::StrCat(left)}});
}

void BackgroundEventRecorder::Record(const nlohmann::json& object, EventType type,
                                     const std::string& reason, const std::string& message) {
  // Only what an event names: the involved object may be a whole job with its status.
  nlohmann::json meta = object.value("metadata", nlohmann::json::object());
  nlohmann::json named = {{"apiVersion", object.value("apiVersion", "")},
                          {"kind", object.value("kind", "")},
                          {"metadata",
                           {{"name", meta.value("name", "")},
                            {"namespace", meta.value("namespace", "")},
                            {"uid", meta.value("uid", "")},
                            {"resourceVersion", meta.value("resourceVersion", "")}}}};
  absl::MutexLock lock(&mu_);
  if (queue_.size() >= capacity_) {
    if (dropped_++ % 100 == 0) {
      LogWarning("event queue full: dropping events",
                 {{"reason", reason}, {"dropped", absl::StrCat(dropped_)}});
    }
    return;
  }
  queue_.push_back({std::move(named), type, reason, message});
}

void BackgroundEventRecorder::Flush() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &BackgroundEventRecorder::Idle));
}

void BackgroundEventRecorder::Loop() {
  while (true) {
    Pending next;
    {
      absl::MutexLock lock(&mu_);
      busy_ = false;
      mu_.Await(absl::Condition(this, &BackgroundEventRecorder::HasWork));
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    inner_->Record(next.object, next.type, next.reason, next.message);
  }
}

}  // namespace disttrain::runtime
