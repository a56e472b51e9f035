// A batch's ids become positions in each table's distinct ids: a table's rows are pulled and
// pushed once per batch however many examples and fields use them.
#include "trainer/models/sparse_batch.h"

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(SparseBatchTest, DistinctIdsPerTableSharedByFieldsAndExamples) {
  FeatureLayout layout;
  layout.tables = {"item", "genre"};
  layout.dims = {4, 4};
  layout.fields = {
      {"watched", 0, Pooling::kMean}, {"liked", 0, Pooling::kSum}, {"genres", 1, Pooling::kMean}};
  layout.dense_width = 1;
  std::vector<Example> ex(2);
  ex[0] = {1, {0.5f}, {7, 8, 20, 21}, {1, 2, 4}};  // watched 7, liked 8, genres 20 21
  ex[1] = {0, {1.5f}, {8, 7, 20}, {1, 2, 3}};      // watched 8, liked 7, genres 20
  SparseBatch b;
  BatchBuilder builder(layout);
  builder.Build(ex, &b);
  EXPECT_EQ(b.n, 2);
  EXPECT_EQ(b.labels, (std::vector<float>{1, 0}));
  EXPECT_EQ(b.dense, (std::vector<float>{0.5f, 1.5f}));
  EXPECT_EQ(b.table_ids[0], (std::vector<uint64_t>{7, 8})) << "two fields share the item table";
  EXPECT_EQ(b.table_ids[1], (std::vector<uint64_t>{20, 21}));
  EXPECT_EQ(b.fields[0].rows, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(b.fields[1].rows, (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(b.fields[2].offsets, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(b.fields[2].rows, (std::vector<uint32_t>{0, 1, 0}));
  builder.Build({ex[1]}, &b);
  EXPECT_EQ(b.table_ids[0], (std::vector<uint64_t>{8, 7})) << "a new batch starts afresh";
}

}  // namespace
}  // namespace disttrain::trainer
