// The schema file: what it says, the defaults it fills in, and every mistake refused with the
// field named.
#include "trainer/data/schema.h"

#include "gtest/gtest.h"
#include "tests/unit/trainer/data/data_files.h"

namespace disttrain::trainer {
namespace {

using testing::kSchema;

TEST(SchemaTest, ReadsColumnsTablesJoinsAndTheLabel) {
  absl::StatusOr<Schema> s = ParseSchema(kSchema, "/data");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->format, "tsv");
  EXPECT_EQ(s->delimiter, '\t');
  EXPECT_EQ(s->files, std::vector<std::string>{"/data/ratings.inter"});
  ASSERT_EQ(s->joins.size(), 2u);
  EXPECT_EQ(s->joins[1].files, std::vector<std::string>{"/data/items.item"});
  EXPECT_EQ(s->label, "rating");
  EXPECT_EQ(s->label_threshold, 4.0f);
  ASSERT_EQ(s->fields().size(), 5u) << "the bucketed age is a field";
  EXPECT_TRUE(s->dense_inputs().empty());
  EXPECT_EQ(s->fields()[4]->table, "genre");
  EXPECT_EQ(s->fields()[4]->kind, ColumnKind::kMultiCategorical);
  // user_id is listed; the other columns' tables take table_defaults.
  ASSERT_EQ(s->tables.size(), 5u);
  EXPECT_EQ(s->table("user_id")->capacity, 1000u);
  EXPECT_EQ(s->table("genre")->dim, 4);
  EXPECT_FLOAT_EQ(s->table("genre")->learning_rate, 0.1f);
  EXPECT_NE(s->table("genre")->seed, s->table("gender")->seed) << "each table its own seed";
  EXPECT_EQ(s->wide.optimizer, embedding::RowOptimizerKind::kFtrl);
  EXPECT_EQ(s->wide.dim, 1);
  EXPECT_EQ(WideTableName("genre"), "genre/wide");
}

TEST(SchemaTest, JsonWorksAsWellAsYaml) {
  absl::StatusOr<Schema> s = ParseSchema(
      R"({"files": ["a.csv"], "label": "clicked",
          "columns": [{"name": "c1"}, {"name": "n1", "type": "numeric", "transform": "log1p"}]})",
      "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->format, "csv");
  EXPECT_EQ(s->delimiter, ',');
  ASSERT_EQ(s->dense_inputs().size(), 1u);
  EXPECT_TRUE(s->dense_inputs()[0]->log1p);
  EXPECT_EQ(s->fields()[0]->table, "c1");
}

TEST(SchemaTest, RefusesMistakesNamingTheField) {
  const std::string base = "files: [a.csv]\nlabel: y\n";
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {base + "columns: [{name: a, tabel: t}]", "schema.columns[0]: unknown key \"tabel\""},
      {base + "columns: [{name: a, type: text}]",
       "schema.columns[0].type: \"text\" is not categorical, multi_categorical or numeric"},
      {base + "columns: [{name: a, type: numeric, buckets: [3, 1]}]",
       "schema.columns[0].buckets must be strictly increasing"},
      {base + "columns: [{name: a, buckets: [1]}]",
       "schema.columns[0].buckets: only numeric columns have buckets"},
      {base + "columns: [{name: a, type: numeric, table: t}]",
       "schema.columns[0].table: a numeric column without buckets is a dense input and has no "
       "table"},
      {base + "columns: [{name: a}]\ntables: [{name: b}]", "schema.tables: no column uses \"b\""},
      {base + "columns: [{name: a}, {name: a}]", "schema.columns: \"a\" twice"},
      {base + "columns: [{name: y}]", "schema.columns: \"y\" is the label"},
      {base + "columns: [{name: a}]\ntables: [{name: a, optimizer: adam}]",
       "schema.tables[0].optimizer: unknown optimizer \"adam\" (want sgd, adagrad or ftrl)"},
      {base + "columns: [{name: a}]\ntables: [{name: a, dim: 0}]",
       "schema.tables[0].dim is 0; it must be between 1 and 4096"},
      {"files: [a.csv]\ncolumns: [{name: a}]", "schema.label: name the label column"},
      {"label: y\ncolumns: [{name: a}]", "schema.files: name at least one file"},
      {base + "test_files: [b.csv]\ntest_fraction: 0.1\ncolumns: [{name: a}]",
       "schema: give test_files or test_fraction, not both"},
      {base + "format: parquet\ncolumns: [{name: a}]",
       "schema.format: \"parquet\" is not csv, tsv, tfrecord or synthetic-criteo"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Schema> s = ParseSchema(c.text, "");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.status().message(), c.error) << c.text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(SchemaTest, LoadNamesTheFileAndResolvesNextToIt) {
  testing::DataDir dir;
  const std::string path = dir.Write("schema.yaml", kSchema);
  absl::StatusOr<Schema> s = LoadSchema(path, "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->files[0], dir.path() + "/ratings.inter");
  EXPECT_EQ(LoadSchema(dir.path() + "/none.yaml", "").status().message(),
            "cannot open the schema file " + dir.path() + "/none.yaml");
  const std::string bad = dir.Write("bad.yaml", "files: [a]\nlabel: y\ncolumns: 3\n");
  EXPECT_EQ(LoadSchema(bad, "").status().message(),
            bad + ": schema.columns: list the feature columns");
}

TEST(SchemaTest, SyntheticCriteoHasThirteenNumbersAndTwentySixCategories) {
  absl::StatusOr<Schema> s =
      ParseSchema("format: synthetic-criteo\nrows: 5000\ntable_defaults: {dim: 16}\n", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dense_inputs().size(), 13u);
  EXPECT_EQ(s->fields().size(), 26u);
  EXPECT_EQ(s->tables.size(), 26u);
  EXPECT_EQ(s->tables[3].dim, 16);
  EXPECT_EQ(s->synthetic_rows, 5000u);
  EXPECT_GT(s->test_fraction, 0);
}

}  // namespace
}  // namespace disttrain::trainer
