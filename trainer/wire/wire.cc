#include "trainer/wire/wire.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "trainer/wire/transport_security.h"

namespace disttrain::trainer::wire {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void PutTag(int field, int type, std::string* out) {
  PutVarint(static_cast<uint64_t>(field << 3 | type), out);
}

void ReleaseKeepalive(void* p) { delete static_cast<std::shared_ptr<const void>*>(p); }

// Reads protobuf framing across a list of slices.
class SliceReader {
 public:
  SliceReader(const std::vector<grpc::Slice>& slices, size_t slice, size_t pos, size_t limit)
      : slices_(slices), slice_(slice), pos_(pos), left_(limit) {}

  size_t left() const { return left_; }
  size_t slice() const { return slice_; }
  size_t pos() const { return pos_; }

  bool Byte(uint8_t* b) {
    Normalize();
    if (left_ == 0 || slice_ >= slices_.size()) return false;
    *b = slices_[slice_].begin()[pos_++];
    --left_;
    return true;
  }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!Byte(&b)) return false;
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  bool Skip(size_t n) {
    if (n > left_) return false;
    left_ -= n;
    while (n > 0) {
      Normalize();
      if (slice_ >= slices_.size()) return false;
      const size_t step = std::min(n, slices_[slice_].size() - pos_);
      pos_ += step;
      n -= step;
    }
    return true;
  }

  bool String(size_t n, std::string* out) {
    if (n > left_) return false;
    out->clear();
    out->reserve(n);
    left_ -= n;
    while (n > 0) {
      Normalize();
      if (slice_ >= slices_.size()) return false;
      const size_t step = std::min(n, slices_[slice_].size() - pos_);
      out->append(reinterpret_cast<const char*>(slices_[slice_].begin()) + pos_, step);
      pos_ += step;
      n -= step;
    }
    return true;
  }

  // Skips a field of wire type `type` whose tag was read.
  bool SkipField(int type) {
    uint64_t n;
    switch (type) {
      case kVarint:
        return Varint(&n);
      case kFixed64:
        return Skip(8);
      case kLen:
        return Varint(&n) && Skip(n);
      case kFixed32:
        return Skip(4);
      default:
        return false;
    }
  }

 private:
  void Normalize() {
    while (slice_ < slices_.size() && pos_ >= slices_[slice_].size()) {
      ++slice_;
      pos_ = 0;
    }
  }

  const std::vector<grpc::Slice>& slices_;
  size_t slice_, pos_, left_;
};

size_t TotalSize(const std::vector<grpc::Slice>& slices) {
  size_t n = 0;
  for (const grpc::Slice& s : slices) n += s.size();
  return n;
}

}  // namespace

// A fixed 1 MiB HTTP/2 window per stream instead of gRPC's BDP-probed one, which grew to tens
// of MiB per connection: a parameter server serving 4 workers a 64 MiB model peaked at 5x the
// model's size with it, 2.8x with 2 MiB and 2.53x with 1 MiB (1 MiB blocks), at the same throughput
// (docs/notes/trainer-data-path.md). Reads from the socket of up to 1 MiB instead of gRPC's default
// chunks: push+pull of a 16 MiB model 3.03 GB/s against 2.63 (medians of 5 alternating runs), the
// same at 64 and 256 MiB, and the same peak memory.
constexpr std::pair<const char*, int> kTransportArgs[] = {
    {"grpc.http2.bdp_probe", 0},
    {"grpc.http2.lookahead_bytes", 1 << 20},
    {"grpc.experimental.tcp_read_chunk_size", 1 << 20},
};

// kTransportArgs, then DISTTRAIN_GRPC_ARGS ("name=int,name=int"; for transport experiments
// such as the ones in docs/notes/trainer-data-path.md, read by every process of a job). A malformed
// entry is reported once and ignored.
std::vector<std::pair<std::string, int>> TransportArgs() {
  std::vector<std::pair<std::string, int>> out(std::begin(kTransportArgs),
                                               std::end(kTransportArgs));
  const char* extra = std::getenv("DISTTRAIN_GRPC_ARGS");
  if (extra == nullptr) return out;
  for (absl::string_view entry : absl::StrSplit(extra, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(entry, absl::MaxSplits('=', 1));
    int value = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &value)) {
      static std::once_flag once;
      std::call_once(once, [&] {
        std::cerr << "disttrain: ignoring DISTTRAIN_GRPC_ARGS entry \"" << entry
                  << "\" (expected name=integer)\n";
      });
      continue;
    }
    out.emplace_back(std::string(kv.first), value);
  }
  return out;
}

void SetReconnectArgs(grpc::ChannelArguments* args) {
  args->SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args->SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args->SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args->SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 1000);
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address) {
  grpc::ChannelArguments args;
  SetReconnectArgs(&args);
  return grpc::CreateCustomChannel(address, ChannelCredentials(), args);
}

void PollConnectsPromptly() {
  setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "100", /*overwrite=*/0);
}

void SetTransportArgs(grpc::ChannelArguments* args) {
  SetReconnectArgs(args);
  for (const auto& [k, v] : TransportArgs()) args->SetInt(k, v);
}

void SetTransportArgs(grpc::ServerBuilder* builder) {
  for (const auto& [k, v] : TransportArgs()) builder->AddChannelArgument(k, v);
}

void KeepFreedMemoryMapped() {
  // The largest threshold glibc accepts (32 MiB): blocks and gRPC buffers come from the heap,
  // and the heap is not trimmed while the process lives.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  // One arena: what one gRPC thread frees, another reuses (with an arena per thread each kept
  // its own high-water mark: 3.2x the model resident instead of 2.6x, measured).
  mallopt(M_ARENA_MAX, 1);
}

grpc::ByteBuffer EncodeChunk(std::string_view shard, uint64_t offset, const float* data, size_t n,
                             std::shared_ptr<const void> keepalive) {
  const size_t bytes = n * sizeof(float);
  // TensorChunk: shard = 1 (string), offset = 2 (varint), data = 3 (bytes), in that order.
  const size_t inner = 1 + VarintSize(shard.size()) + shard.size() + 1 + VarintSize(offset) + 1 +
                       VarintSize(bytes) + bytes;
  std::string head;
  head.reserve(32 + shard.size());
  PutTag(2, kLen, &head);
  PutVarint(inner, &head);
  PutTag(1, kLen, &head);
  PutVarint(shard.size(), &head);
  head.append(shard);
  PutTag(2, kVarint, &head);
  PutVarint(offset, &head);
  PutTag(3, kLen, &head);
  PutVarint(bytes, &head);
  grpc::Slice slices[2] = {grpc::Slice(head),
                           grpc::Slice(const_cast<float*>(data), bytes, &ReleaseKeepalive,
                                       new std::shared_ptr<const void>(std::move(keepalive)))};
  return grpc::ByteBuffer(slices, bytes > 0 ? 2 : 1);
}

grpc::ByteBuffer EncodeField1(const google::protobuf::MessageLite& message) {
  std::string out;
  PutTag(1, kLen, &out);
  PutVarint(message.ByteSizeLong(), &out);
  message.AppendToString(&out);
  grpc::Slice slice(out);
  return grpc::ByteBuffer(&slice, 1);
}

bool Decoded::Parse(const grpc::ByteBuffer& buffer) {
  slices_.clear();
  field_ = 0;
  shard_.clear();
  offset_ = 0;
  data_len_ = 0;
  data_slice_ = data_pos_ = 0;
  if (!buffer.Dump(&slices_).ok()) {
    error_ = "unreadable message";
    return false;
  }
  SliceReader r(slices_, 0, 0, TotalSize(slices_));
  uint64_t tag, len;
  if (!r.Varint(&tag) || (tag & 7) != kLen || !r.Varint(&len) || len != r.left()) {
    error_ = "a message must hold exactly one header or one chunk";
    return false;
  }
  field_ = static_cast<int>(tag >> 3);
  if (field_ == 1) return r.String(len, &field1_);
  if (field_ != 2) {
    error_ = absl::StrCat("unexpected field ", field_);
    return false;
  }
  bool have_data = false;
  while (r.left() > 0) {
    if (!r.Varint(&tag)) break;
    const int field = static_cast<int>(tag >> 3), type = static_cast<int>(tag & 7);
    if (field == 1 && type == kLen) {
      if (!r.Varint(&len) || !r.String(len, &shard_)) break;
    } else if (field == 2 && type == kVarint) {
      if (!r.Varint(&offset_)) break;
    } else if (field == 3 && type == kLen) {
      if (!r.Varint(&len) || len > r.left()) break;
      data_slice_ = r.slice();
      data_pos_ = r.pos();
      data_len_ = len;
      have_data = true;
      if (!r.Skip(len)) break;
    } else if (!r.SkipField(type)) {
      break;
    }
  }
  if (r.left() > 0) {
    error_ = "a malformed TensorChunk";
    return false;
  }
  if (!have_data) data_len_ = 0;
  return true;
}

bool Decoded::ParseField1(google::protobuf::MessageLite* out) const {
  return field_ == 1 && out->ParseFromString(field1_);
}

ChunkData Decoded::TakeData() {
  ChunkData out;
  out.bytes_ = data_len_;
  if (data_len_ == 0) return out;
  out.first_pos_ = data_pos_;
  out.slices_.assign(std::make_move_iterator(slices_.begin() + data_slice_),
                     std::make_move_iterator(slices_.end()));
  slices_.clear();
  data_len_ = 0;
  return out;
}

void ChunkData::ForEachRun(size_t begin, size_t end,
                           absl::FunctionRef<void(const std::byte* values, size_t n)> fn) const {
  end = std::min(end, bytes_);
  size_t slice = 0, pos = first_pos_ + begin;
  // Finds the slice holding byte `pos` of the current slice onwards.
  auto normalize = [&] {
    while (slice < slices_.size() && pos >= slices_[slice].size()) {
      pos -= slices_[slice].size();
      ++slice;
    }
  };
  size_t left = end > begin ? end - begin : 0;
  while (left >= sizeof(float)) {
    normalize();
    if (slice >= slices_.size()) return;
    const auto* p = reinterpret_cast<const std::byte*>(slices_[slice].begin()) + pos;
    const size_t whole = std::min(left, slices_[slice].size() - pos) / sizeof(float);
    if (whole > 0) {
      fn(p, whole);
      pos += whole * sizeof(float);
      left -= whole * sizeof(float);
      continue;
    }
    // A value split between buffers: join its bytes.
    std::byte joined[sizeof(float)];
    for (size_t k = 0; k < sizeof(float); ++k) {
      normalize();
      if (slice >= slices_.size()) return;
      joined[k] = static_cast<std::byte>(slices_[slice].begin()[pos++]);
    }
    fn(joined, 1);
    left -= sizeof(float);
  }
}

void Decoded::CopyData(void* dst) const {
  char* out = static_cast<char*>(dst);
  size_t slice = data_slice_, pos = data_pos_, left = data_len_;
  while (left > 0 && slice < slices_.size()) {
    const size_t n = std::min(left, slices_[slice].size() - pos);
    std::memcpy(out, slices_[slice].begin() + pos, n);
    out += n;
    left -= n;
    ++slice;
    pos = 0;
  }
}

}  // namespace disttrain::trainer::wire
