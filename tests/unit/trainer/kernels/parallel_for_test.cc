#include "trainer/kernels/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::kernels {
namespace {

using ::testing::Each;

// Counts the calls of each index.
std::vector<int> Calls(size_t n) {
  std::vector<std::atomic<int>> calls(n);
  ParallelFor(n, [&](size_t i) { calls[i].fetch_add(1); });
  std::vector<int> out;
  for (const auto& c : calls) out.push_back(c.load());
  return out;
}

TEST(ParallelForTest, RunsEveryIndexOnceBeforeItReturns) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{10000}}) {
    EXPECT_THAT(Calls(n), Each(1)) << n << " pieces";
    EXPECT_EQ(Calls(n).size(), n);
  }
}

TEST(ParallelForTest, ConcurrentCallsEachRunAllTheirOwnPieces) {
  // One call has the pool; the other runs on its caller's thread. Neither loses a piece.
  auto all_once = [](const std::vector<int>& calls) {
    return std::all_of(calls.begin(), calls.end(), [](int c) { return c == 1; });
  };
  std::atomic<int> failed = 0;
  std::thread other([&] {
    for (int round = 0; round < 50; ++round) failed += !all_once(Calls(1000));
  });
  for (int round = 0; round < 50; ++round) failed += !all_once(Calls(1000));
  other.join();
  EXPECT_EQ(failed.load(), 0) << "calls that missed or repeated a piece";
}

TEST(ParallelForTest, ANestedCallRunsItsPiecesToo) {
  // The replica's towers run in parallel and each tower's model may spread its own work again.
  std::vector<std::atomic<int>> calls(8 * 100);
  ParallelFor(
      8, [&](size_t i) { ParallelFor(100, [&](size_t j) { calls[i * 100 + j].fetch_add(1); }); });
  for (size_t k = 0; k < calls.size(); ++k) ASSERT_EQ(calls[k].load(), 1) << "piece " << k;
}

}  // namespace
}  // namespace disttrain::kernels
