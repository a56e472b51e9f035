// Writes TensorBoard event files: TFRecords (length, masked CRC-32C of the length, an Event
// proto, its masked CRC-32C) in `dir`/events.out.tfevents.<time>.<host>.<pid>, opened with the
// "brain.Event:2" version record TensorBoard expects first. Each record is flushed as written,
// so TensorBoard sees a running job and a killed process loses nothing already written.
// Thread-compatible.
#ifndef DISTTRAIN_TRAINER_SUMMARY_EVENT_WRITER_H_
#define DISTTRAIN_TRAINER_SUMMARY_EVENT_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace disttrain::trainer {

class EventWriter {
 public:
  // Creates `dir` (and its parents) if needed.
  static absl::StatusOr<std::unique_ptr<EventWriter>> Open(const std::string& dir);
  ~EventWriter();

  // One Event at `step` with a scalar summary value per (tag, value).
  absl::Status WriteScalars(int64_t step, const std::vector<std::pair<std::string, float>>& values,
                            absl::Time wall_time = absl::Now());

  const std::string& path() const { return path_; }

 private:
  EventWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  absl::Status WriteRecord(const std::string& data);

  const std::string path_;
  std::FILE* const file_;
};

// One TFRecord: the framing around `data`.
std::string TfRecord(const std::string& data);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_SUMMARY_EVENT_WRITER_H_
