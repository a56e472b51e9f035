// A record becomes an Example as the schema says, and a value the schema cannot read is an
// error naming the record and the column.
#include "trainer/data/example_encoder.h"

#include <cmath>
#include <map>

#include "gtest/gtest.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {
namespace {

// A record from a map of column -> text, split at the separator as the text formats do.
class MapRecord : public Record {
 public:
  explicit MapRecord(std::map<std::string, std::string> v) : v_(std::move(v)) {}
  absl::Status Values(const std::string& name, const std::string& sep,
                      std::vector<absl::string_view>* out) const override {
    out->clear();
    auto it = v_.find(name);
    if (it == v_.end()) return absl::NotFoundError("no such column");
    if (it->second.empty()) return absl::OkStatus();
    if (sep == "\x1f") {
      out->push_back(it->second);
      return absl::OkStatus();
    }
    absl::string_view rest = it->second;
    for (size_t p; (p = rest.find(sep)) != absl::string_view::npos;
         rest.remove_prefix(p + sep.size()))
      out->push_back(rest.substr(0, p));
    out->push_back(rest);
    return absl::OkStatus();
  }
  std::string Where() const override { return "f.csv:line 3"; }

 private:
  std::map<std::string, std::string> v_;
};

Schema TestSchema() {
  absl::StatusOr<Schema> s = ParseSchema(R"(
files: [x.csv]
label: {column: rating, threshold: 4}
columns:
  - {name: user}
  - {name: genres, type: multi_categorical, separator: "|"}
  - {name: age, type: numeric, buckets: [18, 30]}
  - {name: clicks, type: numeric, transform: log1p, default: 1}
)",
                                         "");
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

uint64_t Id(const std::string& s) { return embedding::IdOfString(s); }

TEST(ExampleEncoderTest, EncodesLabelFieldsAndDenseInputs) {
  const Schema schema = TestSchema();
  ExampleEncoder enc(schema);
  Example e;
  ASSERT_TRUE(enc.Encode(MapRecord({{"rating", "4"},
                                    {"user", "42"},
                                    {"genres", "War|Drama"},
                                    {"age", "29"},
                                    {"clicks", "3"}}),
                         &e)
                  .ok());
  EXPECT_EQ(e.label, 1.0f) << "4 >= the threshold";
  EXPECT_EQ(e.ids, (std::vector<uint64_t>{Id("42"), Id("War"), Id("Drama"), BucketId(1)}));
  EXPECT_EQ(e.ends, (std::vector<uint32_t>{1, 3, 4}));
  EXPECT_EQ(e.dense, std::vector<float>{std::log1p(3.0f)});
  ASSERT_TRUE(
      enc.Encode(
             MapRecord(
                 {{"rating", "2"}, {"user", "42"}, {"genres", ""}, {"age", ""}, {"clicks", ""}}),
             &e)
          .ok());
  EXPECT_EQ(e.label, 0.0f);
  EXPECT_EQ(e.ends, (std::vector<uint32_t>{1, 1, 2})) << "no genre: an empty field";
  EXPECT_EQ(e.ids[1], BucketId(0)) << "an empty age takes the default, 0: bucket 0";
  EXPECT_EQ(e.dense, std::vector<float>{std::log1p(1.0f)}) << "the default clicks";
}

TEST(ExampleEncoderTest, NamesTheRecordAndColumnOfAValueItCannotRead) {
  const Schema schema = TestSchema();
  ExampleEncoder enc(schema);
  Example e;
  const std::map<std::string, std::string> good = {
      {"rating", "4"}, {"user", "1"}, {"genres", "a"}, {"age", "3"}, {"clicks", "2"}};
  struct Case {
    std::string column, value, error;
  };
  const Case cases[] = {
      {"clicks", "12x", "f.csv:line 3: column \"clicks\": \"12x\" is not a number"},
      {"age", "nan", "f.csv:line 3: column \"age\": \"nan\" is not a number"},
      {"rating", "", "f.csv:line 3: column \"rating\": the label is empty"},
  };
  for (const Case& c : cases) {
    std::map<std::string, std::string> r = good;
    r[c.column] = c.value;
    absl::Status s = enc.Encode(MapRecord(r), &e);
    EXPECT_EQ(s.message(), c.error);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  }
  std::map<std::string, std::string> missing = good;
  missing.erase("user");
  EXPECT_EQ(enc.Encode(MapRecord(missing), &e).message(),
            "f.csv:line 3: column \"user\": no such column");
}

TEST(ExampleEncoderTest, ALabelWithoutThresholdMustBeZeroOrOne) {
  absl::StatusOr<Schema> s = ParseSchema("files: [x]\nlabel: y\ncolumns: [{name: a}]\n", "");
  ExampleEncoder enc(*s);
  Example e;
  ASSERT_TRUE(enc.Encode(MapRecord({{"y", "1"}, {"a", "x"}}), &e).ok());
  EXPECT_EQ(e.label, 1.0f);
  EXPECT_EQ(enc.Encode(MapRecord({{"y", "3"}, {"a", "x"}}), &e).message(),
            "f.csv:line 3: column \"y\": the label is 3, not 0 or 1 (give label.threshold to "
            "binarise it)");
}

}  // namespace
}  // namespace disttrain::trainer
