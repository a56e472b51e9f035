// The small store the parameter server's unit tests share: a 3-element shard "b/0" (one block)
// and a shard "w/0" of two whole blocks and 10 elements more (three blocks), every value 1.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_SHARD_STORE_FIXTURE_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_SHARD_STORE_FIXTURE_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "trainer/ps/shard_store.h"

namespace disttrain::trainer::testing {

inline constexpr size_t kTwoBlocksAndABit = 2 * kChunkElements + 10;

inline std::map<std::string, std::vector<float>> Ones() {
  return {{"b/0", std::vector<float>(3, 1.0f)},
          {"w/0", std::vector<float>(kTwoBlocksAndABit, 1.0f)}};
}

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_SHARD_STORE_FIXTURE_H_
