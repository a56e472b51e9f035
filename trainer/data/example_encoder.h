// Turns a record into an Example as the schema says: the label, each field's ids (a value's id is
// the hash of its text, trainer/embedding/id_hash.h; a bucketed number's is its bucket's), each
// dense input's value. A value the schema cannot read is an InvalidArgument that names the
// record's place and the column, never a silent zero. Thread-safe (const).
#ifndef DISTTRAIN_TRAINER_DATA_EXAMPLE_ENCODER_H_
#define DISTTRAIN_TRAINER_DATA_EXAMPLE_ENCODER_H_

#include <vector>

#include "absl/status/status.h"
#include "trainer/data/example.h"
#include "trainer/data/schema.h"

namespace disttrain::trainer {

class ExampleEncoder {
 public:
  explicit ExampleEncoder(const Schema& schema);
  absl::Status Encode(const Record& record, Example* out) const;

 private:
  const Schema& schema_;
  std::vector<const ColumnSpec*> fields_, dense_;
};

// The id of bucket `b` of a numeric column (bucket 0: below the first boundary).
uint64_t BucketId(int b);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_EXAMPLE_ENCODER_H_
