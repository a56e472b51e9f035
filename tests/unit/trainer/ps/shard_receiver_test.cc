// What a parameter server accepts of an Init or Push stream, chunk by chunk: every element of
// every shard exactly once, in order; anything else is refused with the code that names it.
#include "trainer/ps/shard_receiver.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

v1::TensorChunk Chunk(const std::string& shard, uint64_t offset, const std::vector<float>& v) {
  v1::TensorChunk c;
  c.set_shard(shard);
  c.set_offset(offset);
  c.set_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  return c;
}

TEST(ShardReceiverTest, CopiesEveryChunkIntoItsShardAndFinishesWhenAllArrived) {
  std::map<std::string, std::vector<float>> targets = {{"w/0", std::vector<float>(5)},
                                                       {"b/0", std::vector<float>(1)}};
  ShardReceiver r(&targets);
  ASSERT_TRUE(r.Add(Chunk("w/0", 0, {1, 2, 3})).ok());
  ASSERT_TRUE(r.Add(Chunk("b/0", 0, {9})).ok());
  EXPECT_EQ(r.Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "w/0 is incomplete";
  ASSERT_TRUE(r.Add(Chunk("w/0", 3, {4, 5})).ok());
  EXPECT_TRUE(r.Finish().ok());
  EXPECT_EQ(targets["w/0"], (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(targets["b/0"], (std::vector<float>{9}));
}

struct Refusal {
  const char* name;
  std::string shard;
  uint64_t offset;
  size_t bytes;
  grpc::StatusCode code;
};

TEST(ShardReceiverTest, RefusesAChunkThatIsNotTheNextPartOfItsShard) {
  // Shard "w/0" of 4 elements whose first 2 arrived.
  const Refusal cases[] = {
      {"an unknown shard", "v/0", 2, 8, grpc::StatusCode::NOT_FOUND},
      {"an empty chunk", "w/0", 2, 0, grpc::StatusCode::INVALID_ARGUMENT},
      {"part of a float32", "w/0", 2, 6, grpc::StatusCode::INVALID_ARGUMENT},
      {"a gap", "w/0", 3, 4, grpc::StatusCode::INVALID_ARGUMENT},
      {"a duplicate", "w/0", 1, 4, grpc::StatusCode::ALREADY_EXISTS},
      {"past the end", "w/0", 2, 12, grpc::StatusCode::OUT_OF_RANGE},
      {"an offset past the end", "w/0", 5, 4, grpc::StatusCode::OUT_OF_RANGE},
  };
  for (const Refusal& c : cases) {
    ShardReceiver r(std::map<std::string, size_t>{{"w/0", 4}});
    ASSERT_TRUE(r.Accept("w/0", 0, 8).ok());
    const grpc::Status s = r.Accept(c.shard, c.offset, c.bytes);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_TRUE(r.Accept("w/0", 2, 8).ok()) << c.name << ": the refused chunk counted";
    EXPECT_TRUE(r.Finish().ok()) << c.name;
  }
}

}  // namespace
}  // namespace disttrain::trainer
