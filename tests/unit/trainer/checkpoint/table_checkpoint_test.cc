// Table checkpoints: full and delta files, the chain that restores a step, damage detected before
// a row is read, and pruning that keeps what the kept checkpoints need.
#include "trainer/checkpoint/table_checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;

class TableCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::path(::testing::TempDir()) / absl::StrCat("tables-", ::getpid())).string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A checkpoint of `step` on `base` with rows id -> {value, state}.
  void Write(int64_t step, int64_t base, const std::map<uint64_t, float>& rows) {
    absl::StatusOr<std::unique_ptr<TableCheckpointWriter>> w =
        TableCheckpointWriter::Create(dir_, step, base);
    ASSERT_TRUE(w.ok()) << w.status();
    std::vector<uint64_t> ids;
    std::vector<float> values;
    for (const auto& [id, v] : rows) {
      ids.push_back(id);
      values.push_back(v);
      values.push_back(v * 10);
    }
    ASSERT_TRUE((*w)->Add("users", 2, ids, values).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  // The rows `step` restores, applying its chain in order.
  std::map<uint64_t, float> Restore(int64_t step) {
    std::map<uint64_t, float> out;
    absl::StatusOr<std::vector<int64_t>> chain = TableCheckpointChain(dir_, step);
    EXPECT_TRUE(chain.ok()) << chain.status();
    if (!chain.ok()) return out;
    for (int64_t s : *chain) {
      EXPECT_TRUE(ReadTableCheckpoint(
                      dir_, s,
                      [&](const std::string& table, uint32_t rf, absl::Span<const uint64_t> ids,
                          absl::Span<const float> rows) {
                        EXPECT_EQ(table, "users");
                        EXPECT_EQ(rf, 2u);
                        for (size_t i = 0; i < ids.size(); ++i) {
                          EXPECT_EQ(rows[i * 2 + 1], rows[i * 2] * 10) << "the state travels too";
                          out[ids[i]] = rows[i * 2];
                        }
                        return absl::OkStatus();
                      })
                      .ok());
    }
    return out;
  }
  std::string dir_;
};

TEST_F(TableCheckpointTest, ADeltaAppliesOverTheFullCheckpointItBuildsOn) {
  Write(100, kFullTableCheckpoint, {{1, 1.0f}, {2, 2.0f}});
  Write(200, 100, {{2, 2.5f}, {3, 3.0f}});
  Write(300, 200, {{1, 1.5f}});
  EXPECT_EQ(*TableCheckpointChain(dir_, 300), (std::vector<int64_t>{100, 200, 300}));
  EXPECT_EQ(Restore(200), (std::map<uint64_t, float>{{1, 1.0f}, {2, 2.5f}, {3, 3.0f}}));
  EXPECT_EQ(Restore(300), (std::map<uint64_t, float>{{1, 1.5f}, {2, 2.5f}, {3, 3.0f}}));
  EXPECT_EQ(*CheckTableCheckpoint(dir_, 100), kFullTableCheckpoint);
}

TEST_F(TableCheckpointTest, DamageIsFoundBeforeARowIsRead) {
  Write(100, kFullTableCheckpoint, {{1, 1.0f}, {2, 2.0f}});
  const std::string path = dir_ + "/tables-100.bin";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);  // inside the rows: the structure reads, the checksum does not match
    f.put('\x7f');
  }
  bool read_a_row = false;
  absl::Status s = ReadTableCheckpoint(dir_, 100, [&](auto&&...) {
    read_a_row = true;
    return absl::OkStatus();
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), path + " is corrupt: checksum mismatch");
  EXPECT_FALSE(read_a_row);
  Write(200, 150, {{1, 1.0f}});
  EXPECT_EQ(TableCheckpointChain(dir_, 200).status().message(), dir_ + "/tables-150.bin is missing")
      << "a delta whose base is gone breaks the chain";
}

TEST_F(TableCheckpointTest, AnUncommittedWriterLeavesNothing) {
  {
    absl::StatusOr<std::unique_ptr<TableCheckpointWriter>> w =
        TableCheckpointWriter::Create(dir_, 100, kFullTableCheckpoint);
    ASSERT_TRUE((*w)->Add("t", 1, std::vector<uint64_t>{1}, std::vector<float>{1}).ok());
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(TableCheckpointTest, PruningKeepsTheChainsOfTheKeptCheckpoints) {
  Write(100, kFullTableCheckpoint, {{1, 1.0f}});
  Write(200, 100, {{1, 2.0f}});
  Write(300, kFullTableCheckpoint, {{1, 3.0f}});
  Write(400, 300, {{1, 4.0f}});
  Write(500, 400, {{1, 5.0f}});
  PruneTableCheckpoints(dir_, {500, 400});
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"tables-300.bin", "tables-400.bin", "tables-500.bin"}));
  EXPECT_EQ(Restore(500).at(1), 5.0f);
}

}  // namespace
}  // namespace disttrain::trainer
