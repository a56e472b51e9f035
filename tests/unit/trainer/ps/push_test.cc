// A push as the parameter server receives it: chunks checked on arrival and kept in gRPC's
// buffers, then applied from there block by block, however the chunks and slices fall.
#include "trainer/ps/push.h"

#include <cstring>

#include "gtest/gtest.h"
#include "tests/unit/testing/shard_store_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using testing::kTwoBlocksAndABit;
using testing::Ones;

// A chunk of values[offset, offset + n) of `shard` as it arrives: encoded, then cut into
// slices of `piece` bytes.
wire::ChunkData Arrived(const std::string& shard, const std::vector<float>& values, size_t offset,
                        size_t n, size_t piece) {
  grpc::ByteBuffer encoded =
      wire::EncodeChunk(shard, offset, values.data() + offset, n, std::make_shared<int>(0));
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(encoded.Dump(&slices).ok());
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  std::vector<grpc::Slice> cut;
  for (size_t i = 0; i < bytes.size(); i += piece)
    cut.emplace_back(bytes.data() + i, std::min(piece, bytes.size() - i));
  wire::Decoded d;
  EXPECT_TRUE(d.Parse(grpc::ByteBuffer(cut.data(), cut.size()))) << d.error();
  EXPECT_EQ(d.offset(), offset);
  return d.TakeData();
}

std::vector<float> Gradient(size_t n) {
  std::vector<float> g(n);
  // Every byte of a value matters (no round numbers with zero low mantissa bytes).
  for (size_t i = 0; i < n; ++i) g[i] = static_cast<float>(i % 1000) * 0.37f + 0.1f;
  return g;
}

std::vector<float> BlockValues(const ShardStore& store, size_t block) {
  ShardStore::BlockRef b = store.Read(block);
  return std::vector<float>(b->values.get(), b->values.get() + b->size);
}

TEST(ReceivedPushTest, ChunksAcrossBlocksAndSlicesApplyLikeTheDenseGradient) {
  const std::vector<float> w = Gradient(kTwoBlocksAndABit), b = {3.3f, -1.1f, 2.7f};
  // Chunks of 100,000 elements: they straddle block boundaries. Slices of 4099 bytes: values
  // straddle slice boundaries.
  for (size_t piece : {size_t{4099}, size_t{1} << 22}) {
    ShardStore store(Ones(), 0, 1), expected(Ones(), 0, 1);
    ReceivedPush push(store);
    ASSERT_TRUE(push.Add("b/0", 0, Arrived("b/0", b, 0, 3, piece)).ok());
    for (size_t off = 0; off < w.size(); off += 100000) {
      const size_t n = std::min<size_t>(100000, w.size() - off);
      ASSERT_TRUE(push.Add("w/0", off, Arrived("w/0", w, off, n, piece)).ok());
    }
    ASSERT_TRUE(push.Finish().ok());
    ShardStore::BlockRef sending = store.Read(2);  // a pull holds it: copy-on-write
    for (size_t i = 0; i < store.blocks().size(); ++i) Axpy(store, i, -0.5f, push);
    const DensePush dense({{"b/0", b}, {"w/0", w}});
    for (size_t i = 0; i < expected.blocks().size(); ++i) Axpy(expected, i, -0.5f, dense);
    for (size_t i = 0; i < store.blocks().size(); ++i)
      EXPECT_EQ(BlockValues(store, i), BlockValues(expected, i)) << "block " << i;
    EXPECT_EQ(BlockValues(store, 1)[7], 1.0f - 0.5f * w[7]);  // block 1: w/0 from 0
    EXPECT_EQ(sending->values[0], 1.0f) << "the block being sent is unchanged";
  }
}

TEST(ReceivedPushTest, EveryRuleReadsTheReceivedPushAsTheDenseOne) {
  const std::vector<float> w = Gradient(kTwoBlocksAndABit), b = {3.3f, -1.1f, 2.7f};
  for (auto make : {+[] { return MakeAsyncSgd(0.25f); }, +[] { return MakeAdagrad(0.25f, 0.1f); },
                    +[] { return MakeSyncSgd(0.25f, 1); }, +[] { return MakeDynSgd(0.25f); },
                    +[] { return MakeEasgd(); }}) {
    ShardStore store(Ones(), 0, 1), expected(Ones(), 0, 1);
    ReceivedPush push(store);
    ASSERT_TRUE(push.Add("b/0", 0, Arrived("b/0", b, 0, 3, 4099)).ok());
    ASSERT_TRUE(push.Add("w/0", 0, Arrived("w/0", w, 0, w.size(), 4099)).ok());
    ASSERT_TRUE(push.Finish().ok());
    make()->Apply(0, push, &store);
    make()->Apply(0, DensePush({{"b/0", b}, {"w/0", w}}), &expected);
    EXPECT_EQ(store.global_step(), 1);
    for (size_t i = 0; i < store.blocks().size(); ++i)
      EXPECT_EQ(BlockValues(store, i), BlockValues(expected, i)) << "block " << i;
    EXPECT_NE(BlockValues(store, 3), std::vector<float>(10, 1.0f)) << "the check can fail";
  }
}

TEST(ReceivedPushTest, RefusesWhatShardReceiverRefuses) {
  ShardStore store(Ones(), 0, 1);
  const std::vector<float> b = {1, 2, 3};
  ReceivedPush push(store);
  EXPECT_EQ(push.Add("nope", 0, Arrived("nope", b, 0, 3, 64)).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(push.Add("b/0", 1, Arrived("b/0", b, 1, 2, 64)).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT)
      << "a gap";
  ASSERT_TRUE(push.Add("b/0", 0, Arrived("b/0", b, 0, 2, 64)).ok());
  EXPECT_EQ(push.Add("b/0", 1, Arrived("b/0", b, 1, 2, 64)).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(push.Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "incomplete";
}

}  // namespace
}  // namespace disttrain::trainer
