#include "trainer/data/example_encoder.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {
namespace {

absl::Status BadValue(const Record& r, const std::string& column, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(r.Where(), ": column \"", column, "\": ", why));
}

// One number from a field's values; `present` false for an empty field.
absl::Status ParseNumber(const Record& r, const std::string& column,
                         const std::vector<absl::string_view>& values, bool* present, float* out) {
  *present = false;
  if (values.empty()) return absl::OkStatus();
  if (values.size() > 1) return BadValue(r, column, "a list where one number belongs");
  const absl::string_view text = absl::StripAsciiWhitespace(values[0]);
  if (text.empty()) return absl::OkStatus();
  if (!absl::SimpleAtof(text, out) || !std::isfinite(*out))
    return BadValue(r, column, absl::StrCat("\"", text, "\" is not a number"));
  *present = true;
  return absl::OkStatus();
}

}  // namespace

uint64_t BucketId(int b) {
  return embedding::Mix64(0x6275636b65740000ull + static_cast<uint64_t>(b));
}

ExampleEncoder::ExampleEncoder(const Schema& schema)
    : schema_(schema), fields_(schema.fields()), dense_(schema.dense_inputs()) {}

absl::Status ExampleEncoder::Encode(const Record& r, Example* out) const {
  std::vector<absl::string_view> values;
  out->ids.clear();
  out->ends.clear();
  out->dense.clear();
  if (absl::Status s = r.Values(schema_.label, " ", &values); !s.ok())
    return BadValue(r, schema_.label, s.message());
  bool present = false;
  float label = 0;
  if (absl::Status s = ParseNumber(r, schema_.label, values, &present, &label); !s.ok()) return s;
  if (!present) return BadValue(r, schema_.label, "the label is empty");
  if (schema_.label_threshold.has_value()) {
    out->label = label >= *schema_.label_threshold ? 1.0f : 0.0f;
  } else if (label == 0 || label == 1) {
    out->label = label;
  } else {
    return BadValue(
        r, schema_.label,
        absl::StrCat("the label is ", label, ", not 0 or 1 (give label.threshold to binarise it)"));
  }
  for (const ColumnSpec* c : fields_) {
    const std::string& sep = c->kind == ColumnKind::kMultiCategorical ? c->separator : "\x1f";
    if (absl::Status s = r.Values(c->name, sep, &values); !s.ok())
      return BadValue(r, c->name, s.message());
    if (c->kind == ColumnKind::kNumeric) {  // bucketed
      float v = c->default_value;
      if (absl::Status s = ParseNumber(r, c->name, values, &present, &v); !s.ok()) return s;
      if (!present) v = c->default_value;
      const int b = static_cast<int>(std::upper_bound(c->buckets.begin(), c->buckets.end(), v) -
                                     c->buckets.begin());
      out->ids.push_back(BucketId(b));
    } else if (c->kind == ColumnKind::kCategorical) {
      if (values.size() > 1) return BadValue(r, c->name, "a list where one value belongs");
      out->ids.push_back(values.empty()
                             ? embedding::IdOfString("")
                             : embedding::IdOfString({values[0].data(), values[0].size()}));
    } else {
      for (absl::string_view v : values)
        if (!v.empty()) out->ids.push_back(embedding::IdOfString({v.data(), v.size()}));
    }
    out->ends.push_back(static_cast<uint32_t>(out->ids.size()));
  }
  for (const ColumnSpec* c : dense_) {
    if (absl::Status s = r.Values(c->name, "\x1f", &values); !s.ok())
      return BadValue(r, c->name, s.message());
    float v = c->default_value;
    if (absl::Status s = ParseNumber(r, c->name, values, &present, &v); !s.ok()) return s;
    if (!present) v = c->default_value;
    if (c->log1p) v = std::log1p(std::max(v, 0.0f));
    out->dense.push_back(v);
  }
  return absl::OkStatus();
}

}  // namespace disttrain::trainer
