// A parameter server's embedding tables behind their requests: rows round-trip, every broken or
// hostile request is refused whole, and exports give full and changed rows by version.
#include "trainer/ps/embedding_store.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {
namespace {

v1::TableSpec Spec(const std::string& name, int dim) {
  v1::TableSpec s;
  s.set_name(name);
  s.set_dim(dim);
  s.set_optimizer("sgd");
  s.set_learning_rate(1.0f);
  s.set_init_stddev(0);
  return s;
}

// Ids that server `ps` of `n` holds.
std::vector<uint64_t> IdsOf(int ps, int n, int count) {
  std::vector<uint64_t> out;
  for (uint64_t id = 1; static_cast<int>(out.size()) < count; ++id)
    if (embedding::PsOfId(id, n) == ps) out.push_back(id);
  return out;
}

std::string Floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> FloatsOf(const std::string& s) {
  std::vector<float> v(s.size() / sizeof(float));
  std::memcpy(v.data(), s.data(), s.size());
  return v;
}

class EmbeddingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::CreateTablesRequest req;
    *req.add_tables() = Spec("users", 2);
    ASSERT_TRUE(store_.CreateTables(req).ok());
    ids_ = IdsOf(1, 3, 2);
  }
  // Pushes `grads` for ids_, then pulls them; returns the pulled values.
  absl::StatusOr<std::vector<float>> PushPull(const std::string& table, std::vector<uint64_t> ids,
                                              std::string grads) {
    v1::SparsePushPullRequest req;
    v1::SparseRows* push = req.add_push();
    push->set_table(table);
    for (uint64_t id : ids) push->add_ids(id);
    push->set_values(std::move(grads));
    v1::SparseRows* pull = req.add_pull();
    pull->set_table("users");
    for (uint64_t id : ids_) pull->add_ids(id);
    req.set_train(true);
    v1::SparsePushPullResponse resp;
    if (absl::Status s = store_.PushPull(req, &resp); !s.ok()) return s;
    return FloatsOf(resp.rows(0).values());
  }
  std::vector<float> Rows() {
    v1::SparsePushPullRequest req;
    v1::SparseRows* pull = req.add_pull();
    pull->set_table("users");
    for (uint64_t id : ids_) pull->add_ids(id);
    v1::SparsePushPullResponse resp;
    EXPECT_TRUE(store_.PushPull(req, &resp).ok());
    return FloatsOf(resp.rows(0).values());
  }

  EmbeddingStore store_{1, 3};
  std::vector<uint64_t> ids_;
};

TEST_F(EmbeddingStoreTest, PushesApplyBeforeThePullOfTheSameRequest) {
  absl::StatusOr<std::vector<float>> got = PushPull("users", ids_, Floats({1, 2, 3, 4}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::vector<float>{-1, -2, -3, -4}));
}

TEST_F(EmbeddingStoreTest, RefusesABrokenOrHostilePushWholeAndAppliesNothing) {
  ASSERT_TRUE(PushPull("users", ids_, Floats({1, 1, 1, 1})).ok());
  const std::vector<float> before = Rows();
  const uint64_t foreign = IdsOf(0, 3, 1)[0];
  struct Case {
    std::string what;
    std::string table;
    std::vector<uint64_t> ids;
    std::string grads;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"unknown table", "items", ids_, Floats({1, 1, 1, 1}), "unknown table \"items\""},
      {"wrong width", "users", ids_, Floats({1, 1, 1}),
       "table \"users\": 2 ids of width 2 need 16 bytes of gradients, got 12"},
      {"NaN", "users", ids_, Floats({1, NAN, 1, 1}),
       "table \"users\": the gradient of id " + std::to_string(ids_[0]) + " is not finite (nan)"},
      {"infinity", "users", ids_, Floats({1, 1, 1, INFINITY}),
       "table \"users\": the gradient of id " + std::to_string(ids_[1]) + " is not finite (inf)"},
      {"another server's id",
       "users",
       {ids_[0], foreign},
       Floats({1, 1, 1, 1}),
       "table \"users\": id " + std::to_string(foreign) + " belongs to ps 0, not ps 1 of 3"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<float>> got = PushPull(c.table, c.ids, c.grads);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_EQ(got.status().message(), c.error) << c.what;
    EXPECT_EQ(Rows(), before) << c.what << ": nothing may be applied";
  }
  EXPECT_EQ(store_.table("users")->stats().updated, 2u) << "only the first push's two rows";
}

TEST_F(EmbeddingStoreTest, ATableKeepsItsRowsUnlessReset) {
  ASSERT_TRUE(PushPull("users", ids_, Floats({1, 1, 1, 1})).ok());
  v1::CreateTablesRequest again;
  *again.add_tables() = Spec("users", 2);
  ASSERT_TRUE(store_.CreateTables(again).ok());
  EXPECT_EQ(Rows()[0], -1) << "declared again: the rows stay";
  again.set_reset(true);
  ASSERT_TRUE(store_.CreateTables(again).ok());
  EXPECT_EQ(Rows()[0], 0) << "reset: back to the initial value";
  v1::CreateTablesRequest other;
  *other.add_tables() = Spec("users", 4);
  EXPECT_EQ(store_.CreateTables(other).code(), absl::StatusCode::kFailedPrecondition);
  EmbeddingStore empty(0, 1);
  v1::SparsePushPullResponse resp;
  EXPECT_EQ(empty.PushPull({}, &resp).code(), absl::StatusCode::kFailedPrecondition)
      << "a restarted server without tables tells its clients to wait for the restore";
}

TEST_F(EmbeddingStoreTest, ExportsEveryRowOrThoseChangedSinceAVersion) {
  ASSERT_TRUE(PushPull("users", ids_, Floats({1, 1, 1, 1})).ok());
  auto export_rows = [&](uint64_t since, const std::string& incarnation, v1::RowBlock* first) {
    std::vector<uint64_t> ids;
    v1::ExportRowsRequest req;
    req.set_table("users");
    req.set_since_version(since);
    req.set_incarnation(incarnation);
    bool got_first = false;
    EXPECT_TRUE(store_
                    .Export(req, "inc-1", 1 << 20,
                            [&](const v1::RowBlock& b) {
                              if (!got_first) *first = b;
                              got_first = true;
                              for (uint64_t id : b.ids()) ids.push_back(id);
                              return true;
                            })
                    .ok());
    return ids;
  };
  v1::RowBlock first;
  EXPECT_EQ(export_rows(0, "", &first).size(), 2u);
  EXPECT_TRUE(first.full());
  EXPECT_EQ(first.row_floats(), 2u) << "sgd keeps no state: values only";
  const uint64_t version = first.version();
  EXPECT_TRUE(export_rows(version, "inc-1", &first).empty()) << "nothing changed since";
  EXPECT_FALSE(first.full());
  ASSERT_TRUE(PushPull("users", {ids_[1]}, Floats({1, 1})).ok());
  EXPECT_EQ(export_rows(version, "inc-1", &first), std::vector<uint64_t>{ids_[1]});
  EXPECT_EQ(export_rows(version, "inc-0", &first).size(), 2u)
      << "a version of another incarnation: every row";
  EXPECT_TRUE(first.full());
}

TEST_F(EmbeddingStoreTest, ImportRestoresRowsAndChecksThem) {
  v1::RowBlock b;
  b.set_table("users");
  b.set_row_floats(2);
  b.add_ids(ids_[0]);
  b.set_rows(Floats({7, 8}));
  ASSERT_TRUE(store_.Import(b).ok());
  EXPECT_EQ(Rows()[0], 7);
  b.set_row_floats(3);
  EXPECT_EQ(store_.Import(b).message(), "table \"users\": rows of 3 floats, the table's are 2");
  b.set_row_floats(2);
  b.set_ids(0, IdsOf(2, 3, 1)[0]);
  EXPECT_EQ(store_.Import(b).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace disttrain::trainer
