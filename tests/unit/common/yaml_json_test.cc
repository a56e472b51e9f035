#include "common/yaml_json.h"

#include "gtest/gtest.h"

namespace disttrain {
namespace {

using nlohmann::json;

TEST(YamlJsonTest, ResolvesPlainScalarsAndKeepsQuotedOnesAsStrings) {
  auto docs = ParseYamlDocuments(R"(
a: 1
b: "1"
c: true
d: 'true'
e: 1.5
f: ~
g: hello
h: 0x10
i: [1, "two"]
)");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ(
      (*docs)[0],
      json::parse(
          R"({"a":1,"b":"1","c":true,"d":"true","e":1.5,"f":null,"g":"hello","h":16,"i":[1,"two"]})"));
}

TEST(YamlJsonTest, SplitsDocumentsAndSkipsEmptyOnes) {
  auto docs = ParseYamlDocuments("---\na: 1\n---\n---\nb: 2\n");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1]["b"], 2);
}

TEST(YamlJsonTest, ReportsInvalidYaml) {
  auto docs = ParseYamlDocuments("a: [1, 2\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("invalid YAML"), absl::string_view::npos);
}

TEST(YamlJsonTest, ToYamlRoundTripsStringsThatLookLikeOtherTypes) {
  json value = json::parse(R"({"index":"0","flag":"true","empty":"","none":"null","n":3,
    "ratio":0.25,"on":false,"list":["1",2],"text":"a: b","multi":"x\ny","script":"echo 1\necho 2\n"})");
  auto back = ParseYamlDocuments(ToYaml(value));
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << ToYaml(value);
  EXPECT_EQ((*back)[0], value) << ToYaml(value);
}

}  // namespace
}  // namespace disttrain
