// PodState fixtures for the policy tests: a pod known by its uid, as restart and readiness
// counting see it.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_POD_STATES_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_POD_STATES_H_

#include <string>
#include <utility>

#include "operator/policy/pod_state.h"

namespace disttrain::testing {

// A pod named and identified by `uid` that the kubelet restarted `restarts` times in place.
inline policy::PodState PodWithRestarts(std::string uid, int restarts,
                                        policy::PodPhase phase = policy::PodPhase::kRunning,
                                        bool ready = true) {
  policy::PodState p;
  p.name = uid;
  p.uid = std::move(uid);
  p.restart_count = restarts;
  p.phase = phase;
  p.ready = ready;
  return p;
}

}  // namespace disttrain::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_POD_STATES_H_
