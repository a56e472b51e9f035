// TFRecord files of tf.Example: framing and both CRCs checked, features as text, and a damaged
// record named (and, where the framing allows, read past).
#include "trainer/data/tfrecord_reader.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/unit/trainer/data/data_files.h"

namespace disttrain::trainer {
namespace {

std::string ExampleBytes(int64_t user, const std::string& genre1, const std::string& genre2,
                         float rating) {
  disttrain::tensorflow::Example e;
  auto* f = e.mutable_features()->mutable_feature();
  (*f)["user_id"].mutable_int64_list()->add_value(user);
  (*f)["genres"].mutable_bytes_list()->add_value(genre1);
  (*f)["genres"].mutable_bytes_list()->add_value(genre2);
  (*f)["rating"].mutable_float_list()->add_value(rating);
  return e.SerializeAsString();
}

TEST(TfRecordReaderTest, ReadsTheFeaturesOfEachExample) {
  testing::DataDir dir;
  const std::string path =
      dir.Write("d.tfrecord", FrameTfRecord(ExampleBytes(7, "Comedy", "Drama", 4.5f)) +
                                  FrameTfRecord(ExampleBytes(-3, "War", "", 0.1f)));
  absl::StatusOr<std::unique_ptr<TfRecordFile>> f = TfRecordFile::Open(path);
  ASSERT_TRUE(f.ok());
  std::vector<absl::string_view> v;
  ASSERT_TRUE(*(*f)->Next());
  ASSERT_TRUE((*f)->Values("user_id", " ", &v).ok());
  EXPECT_EQ(v, std::vector<absl::string_view>{"7"});
  ASSERT_TRUE((*f)->Values("genres", " ", &v).ok());
  EXPECT_EQ(v, (std::vector<absl::string_view>{"Comedy", "Drama"}));
  ASSERT_TRUE((*f)->Values("rating", " ", &v).ok());
  EXPECT_EQ(v, std::vector<absl::string_view>{"4.5"});
  EXPECT_EQ((*f)->Values("age", " ", &v).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(*(*f)->Next());
  ASSERT_TRUE((*f)->Values("rating", " ", &v).ok());
  EXPECT_EQ(v, std::vector<absl::string_view>{"0.100000001"}) << "float32 to 9 digits: exact";
  EXPECT_EQ((*f)->Where(), path + ": record 2");
  EXPECT_FALSE(*(*f)->Next());
}

TEST(TfRecordReaderTest, ABadDataCrcIsNamedAndReadPast) {
  testing::DataDir dir;
  std::string first = FrameTfRecord(ExampleBytes(1, "a", "b", 1));
  first[14] ^= 0x40;  // a byte of the data
  const std::string path =
      dir.Write("d.tfrecord", first + FrameTfRecord(ExampleBytes(2, "a", "b", 1)));
  absl::StatusOr<std::unique_ptr<TfRecordFile>> f = TfRecordFile::Open(path);
  absl::StatusOr<bool> bad = (*f)->Next();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(bad.status().message(), path + ": record 1: the data's CRC does not match");
  EXPECT_TRUE((*f)->can_continue());
  ASSERT_TRUE(*(*f)->Next());
  std::vector<absl::string_view> v;
  ASSERT_TRUE((*f)->Values("user_id", " ", &v).ok());
  EXPECT_EQ(v, std::vector<absl::string_view>{"2"});
}

TEST(TfRecordReaderTest, ABadLengthOrATruncatedFileStopsTheFile) {
  testing::DataDir dir;
  std::string rec = FrameTfRecord(ExampleBytes(1, "a", "b", 1));
  std::string torn_length = rec;
  torn_length[0] ^= 1;
  absl::StatusOr<std::unique_ptr<TfRecordFile>> f =
      TfRecordFile::Open(dir.Write("a.tfrecord", torn_length));
  EXPECT_EQ((*f)->Next().status().message(),
            dir.path() + "/a.tfrecord: record 1: the length's CRC does not match");
  EXPECT_FALSE((*f)->can_continue());
  f = TfRecordFile::Open(dir.Write("b.tfrecord", rec.substr(0, rec.size() - 6)));
  EXPECT_EQ((*f)->Next().status().message(),
            dir.path() + "/b.tfrecord: record 1: truncated record");
  f = TfRecordFile::Open(dir.Write("c.tfrecord", FrameTfRecord("\xff\xff\xff")));
  EXPECT_EQ((*f)->Next().status().message(),
            dir.path() + "/c.tfrecord: record 1: not a tf.Example");
}

}  // namespace
}  // namespace disttrain::trainer
