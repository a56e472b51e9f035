// The replicas' client of the embedding tables against real parameter servers on loopback: ids
// go to the server that holds them and rows come back in the caller's order, large batches are
// split into calls under the message limit, and tables export and import whole.
#include "trainer/worker/sparse_client.h"

#include <map>

#include "gtest/gtest.h"
#include "tests/unit/testing/loopback_servers.h"
#include "trainer/embedding/id_hash.h"
#include "trainer/embedding/row_init.h"

namespace disttrain::trainer {
namespace {

embedding::TableConfig Table(const std::string& name, int dim) {
  embedding::TableConfig t;
  t.name = name;
  t.dim = dim;
  t.optimizer = embedding::RowOptimizerKind::kSgd;
  t.learning_rate = 1;
  t.init_stddev = 0.1f;
  t.seed = 3;
  return t;
}

class SparseClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    servers_.Start(3, [] { return MakeAsyncSgd(0.1f); });
  }
  testing::LoopbackServers servers_;
};

TEST_F(SparseClientTest, RowsComeFromTheServerThatHoldsThemInTheCallersOrder) {
  SparseClient client(servers_.addresses(), "worker-0");
  ASSERT_TRUE(client.CreateTables({Table("users", 4)}, false).ok());
  std::vector<TableRows> pull = {{"users", 4, {}, {}}};
  for (int id = 1000; id > 0; id -= 7) pull[0].ids.push_back(static_cast<uint64_t>(id));
  ASSERT_TRUE(client.PushPull({}, &pull, /*train=*/true).ok());
  std::vector<float> want(4);
  for (size_t i = 0; i < pull[0].ids.size(); ++i) {
    embedding::InitialRow(3, pull[0].ids[i], 4, 0.1f, want.data());
    ASSERT_EQ(
        std::vector<float>(pull[0].values.begin() + i * 4, pull[0].values.begin() + i * 4 + 4),
        want)
        << "row " << i;
  }
  std::map<int, uint64_t> per_server;
  for (uint64_t id : pull[0].ids) ++per_server[embedding::PsOfId(id, 3)];
  for (int ps = 0; ps < 3; ++ps)
    EXPECT_EQ(servers_.service(ps).embeddings().table("users")->stats().rows, per_server[ps]);
  // The gradients go back the same way: SGD at rate 1 moves each row by its gradient.
  std::vector<TableRows> push = {
      {"users", 4, pull[0].ids, std::vector<float>(pull[0].values.size(), 0.5f)}};
  std::vector<TableRows> again = {{"users", 4, pull[0].ids, {}}};
  ASSERT_TRUE(client.PushPull(push, &again, true).ok());
  for (size_t i = 0; i < again[0].values.size(); ++i)
    ASSERT_FLOAT_EQ(again[0].values[i], pull[0].values[i] - 0.5f);
  EXPECT_EQ(client.bytes_pushed(), pull[0].ids.size() * 16);
}

TEST_F(SparseClientTest, SplitsABatchTooLargeForOneMessage) {
  SparseClient client(servers_.addresses(), "worker-0");
  ASSERT_TRUE(client.CreateTables({Table("wide", 512)}, false).ok());
  std::vector<TableRows> pull = {{"wide", 512, {}, {}}};
  for (uint64_t id = 0; id < 9000; ++id) pull[0].ids.push_back(id);  // 18 MB of rows
  ASSERT_TRUE(client.PushPull({}, &pull, true).ok());
  EXPECT_EQ(pull[0].values.size(), 9000u * 512);
  std::vector<float> want(512);
  embedding::InitialRow(3, 8999, 512, 0.1f, want.data());
  EXPECT_EQ(std::vector<float>(pull[0].values.end() - 512, pull[0].values.end()), want);
}

TEST_F(SparseClientTest, AServerRefusalNamesTheServer) {
  SparseClient client(servers_.addresses(), "worker-0");
  ASSERT_TRUE(client.CreateTables({Table("users", 4)}, false).ok());
  std::vector<TableRows> pull = {{"items", 4, {1, 2, 3, 4, 5, 6}, {}}};
  absl::Status s = client.PushPull({}, &pull, true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown table \"items\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("SparsePushPull on ps "), std::string::npos) << s.message();
}

TEST_F(SparseClientTest, ExportedRowsImportBackIntoResetTables) {
  SparseClient client(servers_.addresses(), "chief-0");
  embedding::TableConfig t = Table("users", 2);
  t.optimizer = embedding::RowOptimizerKind::kAdagrad;
  ASSERT_TRUE(client.CreateTables({t}, false).ok());
  std::vector<TableRows> pull = {{"users", 2, {}, {}}};
  for (uint64_t id = 0; id < 300; ++id) pull[0].ids.push_back(id);
  ASSERT_TRUE(client.PushPull({}, &pull, true).ok());
  std::vector<TableRows> push = {{"users", 2, pull[0].ids, std::vector<float>(600, 0.3f)}};
  std::vector<TableRows> none;
  ASSERT_TRUE(client.PushPull(push, &none, true).ok());
  std::map<uint64_t, std::vector<float>> saved;
  bool complete = false;
  ASSERT_TRUE(client
                  .Export(
                      "users", true,
                      [&](const v1::RowBlock& b) {
                        EXPECT_EQ(b.row_floats(), 4u) << "values and Adagrad's sums";
                        for (int i = 0; i < b.ids_size(); ++i) {
                          std::vector<float> row(4);
                          std::memcpy(row.data(), b.rows().data() + i * 16, 16);
                          saved[b.ids(i)] = row;
                        }
                        return absl::OkStatus();
                      },
                      &complete)
                  .ok());
  EXPECT_TRUE(complete);
  ASSERT_EQ(saved.size(), 300u);
  ASSERT_TRUE(client.CreateTables({t}, /*reset=*/true).ok());
  SparseClient::Import import(&client);
  for (const auto& [id, row] : saved) ASSERT_TRUE(import.Add("users", 4, id, row.data()).ok());
  ASSERT_TRUE(import.Finish().ok());
  std::vector<TableRows> back = {{"users", 2, pull[0].ids, {}}};
  ASSERT_TRUE(client.PushPull({}, &back, false).ok());
  for (size_t i = 0; i < 300; ++i) {
    EXPECT_EQ(back[0].values[i * 2], saved[i][0]);
    EXPECT_EQ(back[0].values[i * 2 + 1], saved[i][1]);
  }
  bool delta_complete = true;
  int rows = 0;
  ASSERT_TRUE(client
                  .Export(
                      "users", false,
                      [&](const v1::RowBlock& b) {
                        rows += b.ids_size();
                        return absl::OkStatus();
                      },
                      &delta_complete)
                  .ok());
  EXPECT_FALSE(delta_complete);
  EXPECT_EQ(rows, 300) << "imported rows count as changed since the last export";
}

}  // namespace
}  // namespace disttrain::trainer
