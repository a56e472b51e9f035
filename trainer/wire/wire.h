// The parameter server's data path on the wire, without protobuf copies of tensor data (the way
// TensorFlow's grpc_tensor_coding avoids them).
//
// PushPullRequest and PushPullReply are both `oneof body { <small message> = 1; TensorChunk
// chunk = 2; }`. Small messages (headers, statuses) go through protobuf as usual. A chunk is
// written as a short slice holding the protobuf framing, followed by a slice that points at the
// float values themselves and keeps their owner alive until gRPC has sent them. On arrival the
// framing is parsed across gRPC's slices and the values are copied once, straight into their
// destination. The bytes are valid protobuf, so any generated client interoperates.
// Thread-compatible functions.
#ifndef DISTTRAIN_TRAINER_WIRE_WIRE_H_
#define DISTTRAIN_TRAINER_WIRE_WIRE_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "google/protobuf/message_lite.h"

namespace disttrain::trainer::wire {

// Transport settings both ends of the data path use (frame sizes, flow-control windows, read
// sizes); see the measurements in docs/notes/trainer-data-path.md.
// A client channel also gets SetReconnectArgs.
void SetTransportArgs(grpc::ChannelArguments* args);
void SetTransportArgs(grpc::ServerBuilder* builder);

// A server that is not up yet (its pod still starting) or restarting is tried again every 100 ms
// growing to 1 s, and its name resolved again after 1 s at most, instead of gRPC's defaults (1 s
// growing 1.6x to 120 s; 30 s between resolutions): a parameter server that came up 40 s after
// the chief was initialised 11 s after it listened (docs/notes/trainer-data-path.md).
void SetReconnectArgs(grpc::ChannelArguments* args);
// A channel with the reconnect arguments and ChannelCredentials() (transport_security.h), for the
// control calls (snapshots).
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address);

// gRPC's client channel (1.51, iomgr) noticed a TCP connect that completed, after earlier
// attempts were refused, only when its backup poller ran (every 5 s by default): a chief started
// 0.05-1 s before its parameter server reached it 5 s after its own start, whatever the delay
// (4.0-5.0 s after the server listened). Polls every 100 ms instead
// (docs/notes/trainer-data-path.md); a value the user set in
// GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS wins. Call once at the start of main, before gRPC
// starts.
void PollConnectsPromptly();

// Keeps freed memory mapped, in one malloc arena, so gRPC's read buffers and the copy-on-write
// blocks are reused instead of page-faulted in afresh every step (measured: +40% push+pull at
// 64 MiB). Call once at the start of main, before any thread starts.
void KeepFreedMemoryMapped();

// `n` floats at `data` as field 2 (TensorChunk) of a oneof message. `keepalive` owns the values:
// it is held until gRPC releases the slice.
grpc::ByteBuffer EncodeChunk(std::string_view shard, uint64_t offset, const float* data, size_t n,
                             std::shared_ptr<const void> keepalive);

// `message` as field 1 of a oneof message (a header or a status).
grpc::ByteBuffer EncodeField1(const google::protobuf::MessageLite& message);

// The data of one received chunk, kept in the gRPC buffers it arrived in (references to them,
// not a copy): a push is held this way until it is complete and then applied from here.
class ChunkData {
 public:
  size_t bytes() const { return bytes_; }
  // Calls fn(values, n) for consecutive runs of whole float32 values covering bytes [begin, end)
  // of the data (both multiples of 4), in order. `values` has any alignment; a value split
  // between two of gRPC's buffers is joined in a 4-byte temporary and passed as a run of one.
  void ForEachRun(size_t begin, size_t end,
                  absl::FunctionRef<void(const std::byte* values, size_t n)> fn) const;

 private:
  friend class Decoded;
  std::vector<grpc::Slice> slices_;
  size_t first_pos_ = 0;  // where the data starts in slices_[0]
  size_t bytes_ = 0;
};

// One received oneof message, decoded without copying its tensor data.
class Decoded {
 public:
  // Parses the framing. False (with `error()`) when the bytes are not one field-1 message or
  // one TensorChunk.
  bool Parse(const grpc::ByteBuffer& buffer);
  const std::string& error() const { return error_; }

  bool is_chunk() const { return field_ == 2; }
  // Field 1: parses the small message into `out`.
  bool ParseField1(google::protobuf::MessageLite* out) const;
  // Field 2: the chunk's shard, offset (elements) and data size (bytes).
  const std::string& shard() const { return shard_; }
  uint64_t offset() const { return offset_; }
  size_t data_bytes() const { return data_len_; }
  // Copies the chunk's data (data_bytes() of it) to `dst`.
  void CopyData(void* dst) const;
  // The chunk's data, keeping gRPC's buffers alive; the message must be parsed again after.
  ChunkData TakeData();

 private:
  std::vector<grpc::Slice> slices_;
  std::string error_;
  int field_ = 0;
  std::string field1_;
  std::string shard_;
  uint64_t offset_ = 0;
  size_t data_slice_ = 0, data_pos_ = 0, data_len_ = 0;  // where the data starts, and its size
};

}  // namespace disttrain::trainer::wire

#endif  // DISTTRAIN_TRAINER_WIRE_WIRE_H_
