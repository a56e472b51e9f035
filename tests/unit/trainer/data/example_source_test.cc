// Where a replica's examples come from: a test split the same everywhere and apart from
// training, each training record with exactly one replica per pass, endless shuffled passes, and
// bad records stopping the run or skipped and counted.
#include "trainer/data/example_source.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/trainer/data/data_files.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {
namespace {

// 200 records "u<i>,<i % 2>" in `files` files.
Schema Numbered(const testing::DataDir& dir, int files, double test_fraction,
                const std::string& extra = "") {
  std::vector<std::string> names;
  for (int f = 0; f < files; ++f) {
    std::string text = "user,clicked\n";
    for (int i = f; i < 200; i += files) absl::StrAppend(&text, "u", i, ",", i % 2, "\n");
    names.push_back(dir.Write(absl::StrCat("part-", f, ".csv"), text + extra));
  }
  Schema s;
  s.format = "csv";
  s.files = names;
  s.test_fraction = test_fraction;
  s.label = "clicked";
  ColumnSpec user;
  user.name = "user";
  user.table = "user";
  s.columns.push_back(user);
  return s;
}

std::multiset<uint64_t> Pass(ExampleSource& src, int n) {
  std::multiset<uint64_t> ids;
  Example e;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<bool> got = src.Next(&e);
    EXPECT_TRUE(got.ok() && *got) << got.status();
    ids.insert(e.ids[0]);
  }
  return ids;
}

std::multiset<uint64_t> TestIds(const Schema& s) {
  SourceOptions o;
  o.test = true;
  absl::StatusOr<std::unique_ptr<ExampleSource>> src = ExampleSource::Open(s, o);
  std::multiset<uint64_t> ids;
  Example e;
  while (*(*src)->Next(&e)) ids.insert(e.ids[0]);
  return ids;
}

TEST(ExampleSourceTest, ReplicasShareTheTrainingRecordsAndNeverSeeTheTestOnes) {
  testing::DataDir dir;
  const Schema s = Numbered(dir, 1, 0.25);  // one file: records are shared by index
  const std::multiset<uint64_t> test = TestIds(s);
  EXPECT_GT(test.size(), 30u);
  EXPECT_LT(test.size(), 70u);
  EXPECT_EQ(TestIds(s), test) << "the split is a pure function of the seed and the record";
  std::multiset<uint64_t> seen;
  for (int part = 0; part < 3; ++part) {
    SourceOptions o;
    o.part = part;
    o.parts = 3;
    o.shuffle_buffer = 16;
    absl::StatusOr<std::unique_ptr<ExampleSource>> src = ExampleSource::Open(s, o);
    ASSERT_TRUE(src.ok()) << src.status();
    // Four passes' worth of this replica's share: the shuffle buffer holds some records back
    // a while, but not that long.
    std::multiset<uint64_t> four = Pass(**src, 4 * static_cast<int>((200 - test.size()) / 3 + 1));
    for (uint64_t id : std::set<uint64_t>(four.begin(), four.end())) seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 200 - test.size()) << "every training record, each with one replica";
  for (uint64_t id : test) EXPECT_EQ(seen.count(id), 0u) << "a test record trained on";
}

TEST(ExampleSourceTest, FilesGoToReplicasWholeWhenThereAreEnough) {
  testing::DataDir dir;
  const Schema s = Numbered(dir, 4, 0);
  std::set<uint64_t> replica1;
  SourceOptions o;
  o.part = 1;
  o.parts = 2;
  o.shuffle_buffer = 4;
  absl::StatusOr<std::unique_ptr<ExampleSource>> src = ExampleSource::Open(s, o);
  for (uint64_t id : Pass(**src, 300)) replica1.insert(id);  // three passes of its 100
  std::set<uint64_t> want;                                   // files 1 and 3: records 1, 3, 5, ...
  for (int i = 1; i < 200; i += 2) want.insert(embedding::IdOfString(absl::StrCat("u", i)));
  EXPECT_EQ(replica1, want);
}

TEST(ExampleSourceTest, ABadRecordStopsTheRunUnlessSkipped) {
  testing::DataDir dir;
  const Schema s = Numbered(dir, 1, 0, "u9,maybe\nu10,1,extra\n");
  SourceOptions o;
  o.shuffle_buffer = 1000;  // fills from the whole file at once
  absl::StatusOr<std::unique_ptr<ExampleSource>> src = ExampleSource::Open(s, o);
  Example e;
  absl::StatusOr<bool> got = (*src)->Next(&e);
  EXPECT_EQ(got.status().message(),
            dir.path() + "/part-0.csv:line 202: column \"clicked\": \"maybe\" is not a number");
  o.skip_bad_records = true;
  o.shuffle_buffer = 1;  // one record read per example: a pass is 200 examples
  src = ExampleSource::Open(s, o);
  EXPECT_EQ(Pass(**src, 201).size(), 201u);
  EXPECT_EQ((*src)->skipped(), 2u) << "the bad number and the line with a field too many";
}

TEST(ExampleSourceTest, AMissingFileFailsAtOnceAndAnEmptyShareIsAnError) {
  testing::DataDir dir;
  Schema s = Numbered(dir, 1, 0);
  s.files.push_back(dir.path() + "/missing.csv");
  EXPECT_EQ(ExampleSource::Open(s, {}).status().code(), absl::StatusCode::kNotFound);
  Schema tiny;
  tiny.format = "csv";
  tiny.files = {dir.Write("one.csv", "user,clicked\nu1,1\n")};
  tiny.label = "clicked";
  tiny.columns = s.columns;
  SourceOptions o;
  o.part = 1;
  o.parts = 2;
  absl::StatusOr<std::unique_ptr<ExampleSource>> src = ExampleSource::Open(tiny, o);
  Example e;
  EXPECT_EQ((*src)->Next(&e).status().message(),
            "replica 1 of 2 has no training example in 1 file(s) (test_fraction 0)");
}

}  // namespace
}  // namespace disttrain::trainer
