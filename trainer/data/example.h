// One example of a recommendation dataset as the sparse models read it, and the interface the
// file readers give a record through. Value types.
#ifndef DISTTRAIN_TRAINER_DATA_EXAMPLE_H_
#define DISTTRAIN_TRAINER_DATA_EXAMPLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace disttrain::trainer {

struct Example {
  float label = 0;             // 0 or 1
  std::vector<float> dense;    // one per dense input column (Schema::dense_inputs())
  std::vector<uint64_t> ids;   // every field's feature ids, field after field
  std::vector<uint32_t> ends;  // per field (Schema::fields()): where its ids end in `ids`
};

// A record of a data file, before the schema reads it.
class Record {
 public:
  virtual ~Record() = default;
  // The text of the values of column `name`: one for a scalar field, several for a list (a text
  // field is split at `separator`; a TFRecord list is one value per item), none for an empty
  // field. NotFound when the record has no such column. The views live until the next call.
  virtual absl::Status Values(const std::string& name, const std::string& separator,
                              std::vector<absl::string_view>* out) const = 0;
  // Where the record is, for errors: "file:line 12" or "file: record 7".
  virtual std::string Where() const = 0;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_EXAMPLE_H_
