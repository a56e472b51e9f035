#include "trainer/metrics/auc.h"

#include <algorithm>
#include <numeric>

namespace disttrain::trainer {

std::optional<double> Auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // The sum of the positives' ranks (1-based), tied scores sharing their mean rank.
  double positive_ranks = 0;
  double positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0.5f) {
        positive_ranks += mean_rank;
        positives += 1;
      }
    }
    i = j;
  }
  const double negatives = static_cast<double>(n) - positives;
  if (positives == 0 || negatives == 0) return std::nullopt;
  return (positive_ranks - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace disttrain::trainer
