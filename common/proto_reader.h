// Reads the protobuf wire format field by field, without generated code: for messages whose
// few wanted fields are known by number (Kubernetes' objects in the operator's watches), so the
// rest is skipped without being decoded or copied. Views point into the input, which must
// outlive the reader. Not thread-safe; cheap to copy.
//
//   ProtoReader r(bytes);
//   while (r.Next()) {
//     if (r.field() == 1) name = r.bytes();
//   }
//   if (!r.ok()) ...  // truncated or malformed input
#ifndef DISTTRAIN_COMMON_PROTO_READER_H_
#define DISTTRAIN_COMMON_PROTO_READER_H_

#include <cstdint>
#include <string_view>

namespace disttrain {

class ProtoReader {
 public:
  enum class WireType { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

  explicit ProtoReader(std::string_view data) : rest_(data) {}

  // Moves to the next field, skipping whatever of the current one was not read. False at the
  // end of the input or on malformed input (then ok() is false).
  bool Next();
  int field() const { return field_; }
  WireType wire_type() const { return type_; }

  // The current field's value. A value read with the wrong accessor for its wire type is an
  // error (ok() turns false, the value is 0 or empty).
  uint64_t varint();
  int64_t int64() { return static_cast<int64_t>(varint()); }
  int32_t int32() { return static_cast<int32_t>(varint()); }
  bool boolean() { return varint() != 0; }
  std::string_view bytes();

  bool ok() const { return ok_; }

 private:
  bool ReadVarint(uint64_t* out);
  bool Fail() {
    ok_ = false;
    rest_ = {};
    return false;
  }

  std::string_view rest_;  // after the current field's key
  int field_ = 0;
  WireType type_ = WireType::kVarint;
  bool value_read_ = true;  // the current field's value was consumed
  bool ok_ = true;
};

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_PROTO_READER_H_
