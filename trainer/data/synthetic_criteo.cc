#include "trainer/data/synthetic_criteo.h"

#include <cmath>

#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {

const uint64_t kCriteoCardinalities[kCriteoCategorical] = {
    1460, 583,   10131227, 2202608, 305,  24,   12517, 633,     3,  93145, 5683,   8351593, 3194,
    27,   14992, 5461306,  10,      5652, 2173, 4,     7046547, 18, 15,    286181, 105,     142572};

namespace {

// SplitMix64 as a stream of uniform doubles in (0, 1).
struct RowRandom {
  uint64_t state;
  double Uniform() {
    state += 0x9e3779b97f4a7c15ull;
    return (static_cast<double>(embedding::Mix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  double Normal() {
    return std::sqrt(-2 * std::log(Uniform())) * std::cos(6.283185307179586 * Uniform());
  }
};

// A Zipf(s) rank in 1..k by inverting the continuous approximation of its distribution.
uint64_t ZipfRank(double u, uint64_t k, double s) {
  const double a = 1 - s;
  const double x = std::pow((std::pow(static_cast<double>(k), a) - 1) * u + 1, 1 / a);
  return std::min<uint64_t>(k, std::max<uint64_t>(1, static_cast<uint64_t>(x)));
}

// The hidden model's weight of a categorical value: fixed by (column, rank).
double HiddenWeight(int column, uint64_t rank) {
  const uint64_t h = embedding::Mix64((static_cast<uint64_t>(column) << 48) ^ rank ^ 0x5eed);
  return (static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0) * 2 - 1) * 0.8;
}

}  // namespace

void SyntheticCriteoRow(uint64_t split_seed, uint64_t r, Example* out) {
  RowRandom rnd{embedding::Mix64(split_seed * 0x51ed27ull ^ embedding::Mix64(r))};
  out->dense.resize(kCriteoNumeric);
  out->ids.resize(kCriteoCategorical);
  out->ends.resize(kCriteoCategorical);
  double logit = -1.25;
  for (int j = 0; j < kCriteoNumeric; ++j) {
    const double z = rnd.Normal();
    const bool missing = rnd.Uniform() < 0.1;
    const double count = missing ? 0 : std::floor(std::exp(1.0 + 0.15 * j + 1.2 * z));
    out->dense[j] = static_cast<float>(std::log1p(count));
    if (j < 4) logit += 0.25 * (j % 2 ? 1 : -1) * (out->dense[j] - 1.0);
  }
  for (int c = 0; c < kCriteoCategorical; ++c) {
    const uint64_t rank = ZipfRank(rnd.Uniform(), kCriteoCardinalities[c], 1.1);
    out->ids[c] = embedding::Mix64((static_cast<uint64_t>(c + 1) << 56) ^ rank);
    out->ends[c] = static_cast<uint32_t>(c + 1);
    if (c % 3 == 0) logit += HiddenWeight(c, rank);
  }
  out->label = rnd.Uniform() < 1 / (1 + std::exp(-logit)) ? 1.0f : 0.0f;
}

}  // namespace disttrain::trainer
