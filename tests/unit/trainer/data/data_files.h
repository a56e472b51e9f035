// Small data files for the data layer's tests, written to a fresh temporary folder.
#ifndef DISTTRAIN_TESTS_UNIT_TRAINER_DATA_DATA_FILES_H_
#define DISTTRAIN_TESTS_UNIT_TRAINER_DATA_DATA_FILES_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace disttrain::trainer::testing {

class DataDir {
 public:
  DataDir() {
    path_ = std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("data-", ::getpid(), "-",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~DataDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A MovieLens-like interactions file in RecBole's atomic format, with users and items to join.
inline constexpr char kInter[] =
    "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
    "1\t10\t5\t100\n"
    "2\t10\t3\t101\n"
    "1\t11\t4\t102\n"
    "3\t12\t1\t103\n";
inline constexpr char kUsers[] =
    "user_id:token\tage:token\tgender:token\toccupation:token\n"
    "1\t24\tM\ttechnician\n"
    "2\t53\tF\tother\n"
    "3\t23\tM\twriter\n";
inline constexpr char kItems[] =
    "item_id:token\tmovie_title:token_seq\tclass:token_seq\n"
    "10\tToy Story\tAnimation Children's Comedy\n"
    "11\tGoldenEye\tAction Adventure Thriller\n"
    "12\tFour Rooms\t\n";

inline constexpr char kSchema[] = R"(
format: tsv
files: [ratings.inter]
joins:
  - files: [users.user]
    key: user_id
  - files: [items.item]
    key: item_id
label: {column: rating, threshold: 4}
columns:
  - {name: user_id}
  - {name: item_id}
  - {name: age, type: numeric, buckets: [18, 25, 35, 45, 50, 56]}
  - {name: gender}
  - {name: class, type: multi_categorical, separator: " ", table: genre}
table_defaults: {dim: 4, optimizer: adagrad, learning_rate: 0.1}
tables:
  - {name: user_id, dim: 4, capacity: 1000}
)";

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TRAINER_DATA_DATA_FILES_H_
