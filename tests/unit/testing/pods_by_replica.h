// Pod states keyed as the policies take them, for the policy tests.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_PODS_BY_REPLICA_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_PODS_BY_REPLICA_H_

#include <utility>
#include <vector>

#include "operator/policy/pod_state.h"
#include "operator/policy/running_policy.h"

namespace disttrain::testing {

// The pods by (role, index), from their own type and index.
inline policy::PodsByReplica PodsByReplica(std::vector<policy::PodState> list) {
  policy::PodsByReplica out;
  for (policy::PodState& p : list) out[{p.type, p.index}] = std::move(p);
  return out;
}

}  // namespace disttrain::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_PODS_BY_REPLICA_H_
