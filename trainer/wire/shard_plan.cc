#include "trainer/wire/shard_plan.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {

std::vector<Shard> PlanShards(const std::vector<VariableSpec>& variables, int num_ps) {
  size_t total = 0;
  for (const VariableSpec& v : variables) total += v.size;
  const size_t fair = std::max<size_t>(1, (total + num_ps - 1) / num_ps);
  std::vector<Shard> shards;
  for (int i = 0; i < static_cast<int>(variables.size()); ++i) {
    const size_t size = variables[i].size;
    const size_t parts = std::max<size_t>(1, (size + fair - 1) / fair);
    for (size_t p = 0; p < parts; ++p) {
      Shard s;
      s.variable = i;
      s.offset = size * p / parts;
      s.size = size * (p + 1) / parts - s.offset;
      s.name = absl::StrCat(variables[i].name, "/", p);
      shards.push_back(std::move(s));
    }
  }
  // Largest first onto the least loaded server (ties: lowest index): balanced and deterministic.
  std::vector<size_t> order(shards.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return shards[a].size > shards[b].size; });
  std::vector<size_t> load(num_ps, 0);
  for (size_t i : order) {
    int best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    shards[i].ps = best;
    load[best] += shards[i].size;
  }
  return shards;
}

std::vector<size_t> ElementsPerPs(const std::vector<Shard>& plan, int num_ps) {
  std::vector<size_t> out(num_ps, 0);
  for (const Shard& s : plan) out[s.ps] += s.size;
  return out;
}

}  // namespace disttrain::trainer
