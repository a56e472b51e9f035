#include "common/proto_reader.h"

namespace disttrain {

bool ProtoReader::ReadVarint(uint64_t* out) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (rest_.empty()) return false;
    const uint8_t b = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = value;
      return true;
    }
  }
  return false;  // more than 10 bytes
}

bool ProtoReader::Next() {
  if (!ok_) return false;
  if (!value_read_) {  // skip the unread value
    switch (type_) {
      case WireType::kVarint:
        varint();
        break;
      case WireType::kBytes:
        bytes();
        break;
      case WireType::kFixed64:
        if (rest_.size() < 8) return Fail();
        rest_.remove_prefix(8);
        break;
      case WireType::kFixed32:
        if (rest_.size() < 4) return Fail();
        rest_.remove_prefix(4);
        break;
    }
    if (!ok_) return false;
  }
  if (rest_.empty()) return false;
  uint64_t key = 0;
  if (!ReadVarint(&key)) return Fail();
  const uint64_t type = key & 7;
  if (type != 0 && type != 1 && type != 2 && type != 5) return Fail();  // groups: not used
  if ((key >> 3) == 0 || (key >> 3) > (1u << 29)) return Fail();
  field_ = static_cast<int>(key >> 3);
  type_ = static_cast<WireType>(type);
  value_read_ = false;
  return true;
}

uint64_t ProtoReader::varint() {
  uint64_t v = 0;
  if (value_read_ || type_ != WireType::kVarint || !ReadVarint(&v)) {
    Fail();
    return 0;
  }
  value_read_ = true;
  return v;
}

std::string_view ProtoReader::bytes() {
  uint64_t length = 0;
  if (value_read_ || type_ != WireType::kBytes || !ReadVarint(&length) || length > rest_.size()) {
    Fail();
    return {};
  }
  value_read_ = true;
  std::string_view out = rest_.substr(0, length);
  rest_.remove_prefix(length);
  return out;
}

}  // namespace disttrain
