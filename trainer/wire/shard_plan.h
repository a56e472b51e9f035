// How variables are split across parameter servers: balanced by bytes, with variables larger
// than a server's fair share split into several shards. Every task computes the same plan from
// the model and the number of ps tasks. Pure function; thread-safe.
#ifndef DISTTRAIN_TRAINER_WIRE_SHARD_PLAN_H_
#define DISTTRAIN_TRAINER_WIRE_SHARD_PLAN_H_

#include <string>
#include <vector>

#include "trainer/models/model.h"

namespace disttrain::trainer {

struct Shard {
  std::string name;   // "<variable>/<part>"
  int variable = 0;   // index in the model's Variables()
  size_t offset = 0;  // first element within the variable
  size_t size = 0;
  int ps = 0;
};

std::vector<Shard> PlanShards(const std::vector<VariableSpec>& variables, int num_ps);

// Elements held by each ps task under `plan`.
std::vector<size_t> ElementsPerPs(const std::vector<Shard>& plan, int num_ps);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WIRE_SHARD_PLAN_H_
