// The chief's copy of the embedding rows (table_copy.h): exports merged by id, rows replaced and
// never dropped, and blocks of the wrong shape refused whole.
#include "trainer/worker/table_copy.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

v1::RowBlock Block(const std::string& table, uint32_t row_floats,
                   const std::vector<std::pair<uint64_t, std::vector<float>>>& rows) {
  v1::RowBlock b;
  b.set_table(table);
  b.set_row_floats(row_floats);
  for (const auto& [id, row] : rows) {
    b.add_ids(id);
    b.mutable_rows()->append(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(float));
  }
  return b;
}

// {table: {id: row}} as ForEachTable passes them.
std::map<std::string, std::map<uint64_t, std::vector<float>>> Read(const TableCopy& copy) {
  std::map<std::string, std::map<uint64_t, std::vector<float>>> out;
  absl::Status s = copy.ForEachTable([&](const std::string& table, uint32_t row_floats,
                                         absl::Span<const uint64_t> ids,
                                         absl::Span<const float> rows) {
    EXPECT_EQ(rows.size(), ids.size() * row_floats);
    for (size_t i = 0; i < ids.size(); ++i)
      out[table][ids[i]].assign(rows.begin() + i * row_floats, rows.begin() + (i + 1) * row_floats);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(TableCopyTest, MergesExportsByIdKeepingRowsNoLaterExportNames) {
  TableCopy copy;
  ASSERT_TRUE(copy.Apply(Block("user", 2, {{7, {1, 2}}, {9, {3, 4}}})).ok());
  ASSERT_TRUE(copy.Apply(Block("item", 3, {{7, {5, 6, 7}}})).ok());
  // A delta: row 9 changed, row 11 is new, row 7 (not in it) stays as it was.
  ASSERT_TRUE(copy.Apply(Block("user", 2, {{9, {30, 40}}, {11, {5, 5}}})).ok());
  EXPECT_EQ(copy.rows(), 4u);
  EXPECT_GT(copy.MemoryBytes(), 4u * 3 * sizeof(float));
  auto held = Read(copy);
  EXPECT_EQ(held["user"],
            (std::map<uint64_t, std::vector<float>>{{7, {1, 2}}, {9, {30, 40}}, {11, {5, 5}}}));
  EXPECT_EQ(held["item"], (std::map<uint64_t, std::vector<float>>{{7, {5, 6, 7}}}));
}

TEST(TableCopyTest, AnEmptyExportChangesNothing) {
  TableCopy copy;
  ASSERT_TRUE(copy.Apply(Block("user", 2, {{7, {1, 2}}})).ok());
  ASSERT_TRUE(copy.Apply(Block("user", 2, {})).ok());  // a restarted, empty server's export
  ASSERT_TRUE(copy.Apply(Block("other", 0, {})).ok());
  EXPECT_EQ(Read(copy)["user"][7], (std::vector<float>{1, 2}));
  EXPECT_EQ(copy.rows(), 1u);
}

TEST(TableCopyTest, RefusesBlocksOfTheWrongShapeWhole) {
  TableCopy copy;
  ASSERT_TRUE(copy.Apply(Block("user", 2, {{7, {1, 2}}})).ok());
  v1::RowBlock short_rows = Block("user", 2, {{8, {1, 2}}, {9, {3, 4}}});
  short_rows.mutable_rows()->resize(3 * sizeof(float));
  EXPECT_EQ(copy.Apply(short_rows).code(), absl::StatusCode::kInvalidArgument);
  absl::Status other_size = copy.Apply(Block("user", 3, {{7, {9, 9, 9}}}));
  EXPECT_EQ(other_size.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(other_size.message().find("the copy's are 2"), std::string::npos) << other_size;
  EXPECT_EQ(copy.Apply(Block("user", 0, {{7, {}}})).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(copy.rows(), 1u);
  EXPECT_EQ(Read(copy)["user"][7], (std::vector<float>{1, 2}));
}

TEST(TableCopyTest, ManyRowsKeepTheirOwnValues) {
  TableCopy copy;
  std::vector<std::pair<uint64_t, std::vector<float>>> rows;
  for (uint64_t id = 0; id < 5000; ++id)
    rows.push_back({id * 0x9E3779B97F4A7C15ull, {static_cast<float>(id)}});
  ASSERT_TRUE(copy.Apply(Block("t", 1, rows)).ok());
  auto held = Read(copy)["t"];
  ASSERT_EQ(held.size(), 5000u);
  for (const auto& [id, row] : rows) EXPECT_EQ(held[id], row) << id;
}

TEST(TableCopyTest, AnErrorOfTheReaderStopsTheWalk) {
  TableCopy copy;
  ASSERT_TRUE(copy.Apply(Block("a", 1, {{1, {1}}})).ok());
  ASSERT_TRUE(copy.Apply(Block("b", 1, {{1, {1}}})).ok());
  int calls = 0;
  absl::Status s = copy.ForEachTable(
      [&](const std::string&, uint32_t, absl::Span<const uint64_t>, absl::Span<const float>) {
        ++calls;
        return absl::UnavailableError("ps 1 went away");
      });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace disttrain::trainer
