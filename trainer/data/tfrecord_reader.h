// TFRecord files of tf.Example records, as TensorFlow writes training data: each record is its
// length (uint64, little-endian), the masked CRC-32C of the length, the data, the masked CRC-32C
// of the data. Both CRCs are checked. The Example is parsed with this project's copy of its wire
// format (proto/tensorflow/example.proto), not TensorFlow's library. A feature's values are given
// as text: bytes as they are, int64s in decimal, floats to 9 significant digits (exact for
// float32). Thread-compatible.
#ifndef DISTTRAIN_TRAINER_DATA_TFRECORD_READER_H_
#define DISTTRAIN_TRAINER_DATA_TFRECORD_READER_H_

#include <cstdio>
#include <deque>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tensorflow/example.pb.h"
#include "trainer/data/example.h"

namespace disttrain::trainer {

class TfRecordFile : public Record {
 public:
  static absl::StatusOr<std::unique_ptr<TfRecordFile>> Open(const std::string& path);
  ~TfRecordFile() override;

  // Reads the next record: true, or false at the end. DataLoss naming the record for a torn
  // frame or a CRC that does not match; InvalidArgument for data that is no tf.Example. After a
  // bad data CRC or Example the file reads on; after a bad length it cannot.
  absl::StatusOr<bool> Next();
  int64_t record() const { return record_; }
  // Whether the last error left the framing intact, so that reading can go on.
  bool can_continue() const { return can_continue_; }

  absl::Status Values(const std::string& name, const std::string& separator,
                      std::vector<absl::string_view>* out) const override;
  std::string Where() const override;

 private:
  TfRecordFile() = default;

  std::string path_;
  FILE* file_ = nullptr;
  int64_t record_ = 0;
  bool can_continue_ = true;
  std::string data_;
  disttrain::tensorflow::Example example_;
  mutable std::deque<std::string> scratch_;
};

// One framed record around `data` (for writers: the tests and the data tools).
std::string FrameTfRecord(const std::string& data);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_TFRECORD_READER_H_
