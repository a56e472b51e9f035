// trainer/data/dataset.cc: IDX files, shards, and the batch iterator.
#include "trainer/data/dataset.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(DatasetTest, ReadsGzipIdxFilesAndShardsByIndex) {
  const fs::path dir = fs::temp_directory_path() / ("idx-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write_gz = [](const fs::path& p, const std::string& bytes) {
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  };
  std::string images = std::string("\0\0\x08\x03\0\0\0\x04\0\0\0\x01\0\0\0\x02", 16) +
                       std::string("\x00\xff\x80\x00\x01\x02\x03\x04", 8);
  std::string labels =
      std::string("\0\0\x08\x01\0\0\0\x04", 8) + std::string("\x01\x02\x03\x09", 4);
  write_gz(dir / "i.gz", images);
  write_gz(dir / "l.gz", labels);
  auto d = ReadIdx((dir / "i.gz").string(), (dir / "l.gz").string());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->n, 4);
  EXPECT_EQ(d->dim, 2);
  EXPECT_FLOAT_EQ(d->x[1], 1.0f);
  EXPECT_EQ(d->y[3], 9);
  Dataset odd = ShardOf(*d, 1, 2);
  EXPECT_EQ(odd.n, 2);
  EXPECT_EQ(odd.y, (std::vector<int32_t>{2, 9}));
  auto bad = ReadIdx((dir / "l.gz").string(), (dir / "i.gz").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("not an IDX image file"));
  fs::remove_all(dir);
}

// Row i of the dataset is {i, i + 0.5}, label i % 10.
Dataset Numbered(int n) {
  Dataset d;
  d.n = n;
  d.dim = 2;
  for (int i = 0; i < n; ++i) {
    d.x.push_back(static_cast<float>(i));
    d.x.push_back(i + 0.5f);
    d.y.push_back(i % 10);
  }
  return d;
}

std::vector<int> Rows(const Batch& b) {
  std::vector<int> rows;
  for (int i = 0; i < b.n; ++i) rows.push_back(static_cast<int>(b.x[2 * i]));
  return rows;
}

TEST(BatchIteratorTest, EveryEpochVisitsEachRowOnceInAnOrderSetBySeed) {
  const Dataset d = Numbered(12);
  BatchIterator a(&d, 4, 7), b(&d, 4, 7), c(&d, 4, 8);
  std::multiset<int> epoch;
  bool differs = false;
  for (int k = 0; k < 3; ++k) {
    const std::vector<int> ra = Rows(a.Next());
    EXPECT_EQ(ra, Rows(b.Next()));
    differs |= ra != Rows(c.Next());
    epoch.insert(ra.begin(), ra.end());
  }
  EXPECT_EQ(epoch, (std::multiset<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_TRUE(differs);
}

// NextInto gathers the batch Next would give into the caller's buffers (the GPU's staging
// buffers), also when the batch is large enough for several threads to copy it (>= 4 MiB).
TEST(BatchIteratorTest, NextIntoGathersTheSameBatchesIntoTheCallersBuffers) {
  for (const int rows : {50, 600000}) {
    const Dataset d = Numbered(rows);
    const int batch = rows == 50 ? 8 : 550000;
    BatchIterator a(&d, batch, 5), b(&d, batch, 5);
    std::vector<float> x(static_cast<size_t>(batch) * 2);
    std::vector<int32_t> y(batch);
    for (int k = 0; k < 3; ++k) {
      const Batch expected = a.Next();
      const Batch got = b.NextInto(x.data(), y.data());
      ASSERT_EQ(got.x, x.data());
      ASSERT_EQ(got.n, batch);
      EXPECT_TRUE(std::equal(x.begin(), x.end(), expected.x)) << rows << " rows, batch " << k;
      EXPECT_TRUE(std::equal(y.begin(), y.end(), expected.y)) << rows << " rows, batch " << k;
    }
  }
}

}  // namespace
}  // namespace disttrain::trainer
