// Delimited text files: fields split as CSV and TSV write them, RecBole's typed headers, joined
// side tables, gzip, and bad lines named.
#include "trainer/data/delimited_reader.h"

#include <zlib.h>

#include "gtest/gtest.h"
#include "tests/unit/trainer/data/data_files.h"

namespace disttrain::trainer {
namespace {

std::vector<std::string> Split(const std::string& line, char delimiter) {
  std::deque<std::string> scratch;
  std::vector<absl::string_view> fields;
  absl::Status s = SplitDelimited(line, delimiter, &scratch, &fields);
  if (!s.ok()) return {"ERROR: " + std::string(s.message())};
  return std::vector<std::string>(fields.begin(), fields.end());
}

TEST(DelimitedReaderTest, SplitsFieldsAsCsvAndTsvWriteThem) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Split("a,b,c", ','), (V{"a", "b", "c"}));
  EXPECT_EQ(Split("a,,c,", ','), (V{"a", "", "c", ""}));
  EXPECT_EQ(Split("\"x, y\",\"say \"\"hi\"\"\",z", ','), (V{"x, y", "say \"hi\"", "z"}));
  EXPECT_EQ(Split("", ','), (V{""}));
  EXPECT_EQ(Split("a\t\"b\"\tc", '\t'), (V{"a", "\"b\"", "c"})) << "TSV has no quoting";
  EXPECT_EQ(Split("\"open,b", ','), (V{"ERROR: an unclosed quote"}));
  EXPECT_EQ(Split("\"a\"b,c", ','), (V{"ERROR: text after a closing quote"}));
}

TEST(DelimitedReaderTest, FindsColumnsByTheirRecBoleShortNames) {
  std::map<std::string, int> c = HeaderColumns({"user_id:token", "rating:float", "plain"});
  EXPECT_EQ(c.at("user_id"), 0);
  EXPECT_EQ(c.at("user_id:token"), 0);
  EXPECT_EQ(c.at("rating"), 1);
  EXPECT_EQ(c.at("plain"), 2);
}

TEST(DelimitedReaderTest, ReadsRecordsAndJoinsTheirSideTables) {
  testing::DataDir dir;
  const std::string inter = dir.Write("r.inter", testing::kInter);
  dir.Write("u.user", testing::kUsers);
  dir.Write("i.item", testing::kItems);
  absl::StatusOr<std::shared_ptr<const SideTable>> users =
      SideTable::Load({{dir.path() + "/u.user"}, "user_id"}, '\t');
  absl::StatusOr<std::shared_ptr<const SideTable>> items =
      SideTable::Load({{dir.path() + "/i.item"}, "item_id"}, '\t');
  ASSERT_TRUE(users.ok() && items.ok());
  absl::StatusOr<std::unique_ptr<DelimitedFile>> f =
      DelimitedFile::Open(inter, '\t', {*users, *items});
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<absl::string_view> v;
  ASSERT_TRUE(*(*f)->Next());
  ASSERT_TRUE((*f)->Values("rating", "\x1f", &v).ok());
  EXPECT_EQ(v, std::vector<absl::string_view>{"5"});
  ASSERT_TRUE((*f)->Values("occupation", "\x1f", &v).ok()) << "from the users' file";
  EXPECT_EQ(v, std::vector<absl::string_view>{"technician"});
  ASSERT_TRUE((*f)->Values("class", " ", &v).ok()) << "from the items' file, split";
  EXPECT_EQ(v, (std::vector<absl::string_view>{"Animation", "Children's", "Comedy"}));
  EXPECT_EQ((*f)->Values("nothing", " ", &v).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*f)->Where(), inter + ":line 2");
  int records = 1;
  while (*(*f)->Next()) ++records;
  EXPECT_EQ(records, 4);
  EXPECT_FALSE(*(*f)->Next());
}

TEST(DelimitedReaderTest, AMissingJoinRowAndABadLineAreNamed) {
  testing::DataDir dir;
  const std::string inter = dir.Write("r.tsv", "user\tx\n1\ta\n9\tb\n2\tc\td\n");
  dir.Write("u.tsv", "user\tage\n1\t30\n2\t40\n");
  absl::StatusOr<std::shared_ptr<const SideTable>> users =
      SideTable::Load({{dir.path() + "/u.tsv"}, "user"}, '\t');
  ASSERT_TRUE(users.ok());
  absl::StatusOr<std::unique_ptr<DelimitedFile>> f = DelimitedFile::Open(inter, '\t', {*users});
  ASSERT_TRUE(f.ok());
  std::vector<absl::string_view> v;
  ASSERT_TRUE(*(*f)->Next());
  ASSERT_TRUE(*(*f)->Next());
  EXPECT_EQ((*f)->Values("age", "\x1f", &v).message(),
            "user \"9\" has no row in " + dir.path() + "/u.tsv");
  absl::StatusOr<bool> bad = (*f)->Next();
  EXPECT_EQ(bad.status().message(), inter + ":line 4: 3 fields where the header has 2");
  EXPECT_FALSE(*(*f)->Next()) << "the file reads on after a bad line";
  EXPECT_EQ(DelimitedFile::Open(inter, '\t', {}).ok(), true);
  EXPECT_EQ(DelimitedFile::Open(dir.path() + "/none.csv", ',').status().code(),
            absl::StatusCode::kNotFound);
}

TEST(DelimitedReaderTest, ReadsGzipFiles) {
  testing::DataDir dir;
  const std::string path = dir.path() + "/d.csv.gz";
  gzFile g = gzopen(path.c_str(), "wb");
  const std::string text = "a,b\r\n1,2\r\n3,4\r\n";
  gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
  gzclose(g);
  absl::StatusOr<std::unique_ptr<DelimitedFile>> f = DelimitedFile::Open(path, ',');
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<absl::string_view> v;
  ASSERT_TRUE(*(*f)->Next());
  ASSERT_TRUE(*(*f)->Next());
  ASSERT_TRUE((*f)->Values("b", "\x1f", &v).ok());
  EXPECT_EQ(v, std::vector<absl::string_view>{"4"}) << "CRLF line ends are taken off";
}

}  // namespace
}  // namespace disttrain::trainer
