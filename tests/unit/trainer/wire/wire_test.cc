// The hand-written chunk encoding is protobuf: generated code parses what it writes, and it
// parses what generated code writes, however gRPC splits the bytes into slices.
#include "trainer/wire/wire.h"

#include <cstring>

#include "disttrain/trainer/v1/parameter_server.pb.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

std::string Flatten(const grpc::ByteBuffer& b) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(b.Dump(&slices).ok());
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// `bytes` as a ByteBuffer cut into slices of `piece` bytes.
grpc::ByteBuffer Sliced(const std::string& bytes, size_t piece) {
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i < bytes.size(); i += piece)
    slices.emplace_back(bytes.data() + i, std::min(piece, bytes.size() - i));
  return grpc::ByteBuffer(slices.data(), slices.size());
}

TEST(WireTest, GeneratedCodeParsesAHandWrittenChunkAndTheValuesAreNotCopied) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f};
  auto owner = std::make_shared<int>(0);
  grpc::ByteBuffer b = wire::EncodeChunk("w/3", 300, values.data(), values.size(), owner);
  EXPECT_EQ(owner.use_count(), 2) << "the slice keeps the values' owner alive";
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(b.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()), static_cast<const void*>(values.data()))
      << "the data slice points at the values";
  slices.clear();
  v1::PushPullReply reply;
  ASSERT_TRUE(reply.ParseFromString(Flatten(b)));
  ASSERT_TRUE(reply.has_chunk());
  EXPECT_EQ(reply.chunk().shard(), "w/3");
  EXPECT_EQ(reply.chunk().offset(), 300u);
  EXPECT_EQ(reply.chunk().data(), std::string(reinterpret_cast<const char*>(values.data()), 12));
  b.Clear();
  EXPECT_EQ(owner.use_count(), 1) << "released with the slice";
}

TEST(WireTest, DecodesWhatGeneratedCodeWritesAcrossAnySlicing) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  v1::PushPullRequest req;
  req.mutable_chunk()->set_shard("bias/0");
  req.mutable_chunk()->set_offset(123456789);
  req.mutable_chunk()->set_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  const std::string bytes = req.SerializeAsString();
  for (size_t piece : {1, 3, 7, 64, 4096, 1 << 20}) {
    wire::Decoded d;
    ASSERT_TRUE(d.Parse(Sliced(bytes, piece))) << piece << ": " << d.error();
    ASSERT_TRUE(d.is_chunk());
    EXPECT_EQ(d.shard(), "bias/0");
    EXPECT_EQ(d.offset(), 123456789u);
    ASSERT_EQ(d.data_bytes(), values.size() * 4);
    std::vector<float> out(values.size());
    d.CopyData(out.data());
    EXPECT_EQ(out, values) << "slices of " << piece << " bytes";
  }
}

TEST(WireTest, TakenDataIsReadInWholeValuesAcrossAnySlicing) {
  std::vector<float> values(1000);
  // Every byte of a value matters (no round numbers with zero low mantissa bytes).
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.37f + 0.1f;
  v1::PushPullRequest req;
  req.mutable_chunk()->set_shard("w/0");
  req.mutable_chunk()->set_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  const std::string bytes = req.SerializeAsString();
  for (size_t piece : {1, 3, 7, 64, 4097, 1 << 20}) {
    wire::Decoded d;
    ASSERT_TRUE(d.Parse(Sliced(bytes, piece))) << piece << ": " << d.error();
    const wire::ChunkData data = d.TakeData();
    ASSERT_EQ(data.bytes(), values.size() * 4);
    // The values of bytes [begin, end), run by run, counting the runs.
    size_t runs = 0;
    auto read = [&](size_t begin, size_t end) {
      std::vector<float> got;
      runs = 0;
      data.ForEachRun(begin, end, [&](const std::byte* p, size_t n) {
        EXPECT_GT(n, 0u);
        ++runs;
        for (size_t k = 0; k < n; ++k) {
          float v;
          std::memcpy(&v, p + 4 * k, 4);
          got.push_back(v);
        }
      });
      return got;
    };
    EXPECT_EQ(read(40, 400), std::vector<float>(values.begin() + 10, values.begin() + 100))
        << "values 10..99, slices of " << piece << " bytes";
    if (piece == (1 << 20)) {
      EXPECT_EQ(runs, 1u) << "values in one slice are one run";
    }
    EXPECT_EQ(read(0, data.bytes()), values) << "all of it, slices of " << piece << " bytes";
  }
}

TEST(WireTest, HeadersRoundTripAndProto3DefaultsAreUnderstood) {
  v1::PushPullHeader h;
  h.set_step(42);
  h.set_push(true);
  h.set_worker("worker-1");
  wire::Decoded d;
  ASSERT_TRUE(d.Parse(wire::EncodeField1(h)));
  EXPECT_FALSE(d.is_chunk());
  v1::PushPullHeader back;
  ASSERT_TRUE(d.ParseField1(&back));
  EXPECT_EQ(back.step(), 42);
  EXPECT_EQ(back.worker(), "worker-1");
  // A generated chunk at offset 0 omits the offset field entirely.
  v1::PushPullRequest req;
  req.mutable_chunk()->set_shard("w/0");
  req.mutable_chunk()->set_data(std::string(8, '\1'));
  ASSERT_TRUE(d.Parse(Sliced(req.SerializeAsString(), 5)));
  EXPECT_EQ(d.offset(), 0u);
  EXPECT_EQ(d.data_bytes(), 8u);
}

TEST(WireTest, RefusesWhatIsNotOneHeaderOrOneChunk) {
  v1::PushPullRequest a, b;
  a.mutable_header()->set_step(1);
  b.mutable_chunk()->set_shard("w/0");
  const std::string chunk = b.SerializeAsString();
  for (const std::string& bad :
       {a.SerializeAsString() + chunk,           // two messages in one
        chunk.substr(0, chunk.size() - 1),       // cut short
        std::string("\x1a\x01x", 3),             // unknown top-level field
        std::string("\x12\x03\x0a\x05x", 5)}) {  // inner length past the end
    wire::Decoded d;
    EXPECT_FALSE(d.Parse(Sliced(bad, 2))) << "accepted " << bad.size() << " bytes";
    EXPECT_FALSE(d.error().empty());
  }
}

}  // namespace
}  // namespace disttrain::trainer
