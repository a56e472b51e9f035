// What the operator keeps of a pod in its cache: only the fields the reconciler reads (names,
// labels, owner, deletion, main-container names, phase, readiness, exit codes and restart
// counts). Everything else (specs, volumes, env, ...) is dropped on arrival, which keeps the
// cache small with thousands of pods. Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_POD_PROJECTION_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_POD_PROJECTION_H_

#include "nlohmann/json.hpp"

namespace disttrain::controller {

nlohmann::json ProjectPod(nlohmann::json pod);

// A Service keeps only its metadata: the reconciler reads its name and owner, never its spec.
nlohmann::json ProjectService(nlohmann::json service);

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_POD_PROJECTION_H_
