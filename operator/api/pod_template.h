// Type checks of a role's pod template. The CRD keeps the template free-form (as TFJob does),
// so the API server accepts e.g. a container whose name is a number; every field the operator
// reads from a template is checked here, at decoding, so a bad one becomes an InvalidSpec error
// naming its path instead of an exception deep in a reconcile. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_POD_TEMPLATE_H_
#define DISTTRAIN_OPERATOR_API_POD_TEMPLATE_H_

#include <string>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace disttrain::api {

// InvalidArgument naming the first field of `pod_template` (at `path`, e.g.
// "spec.replicaSpecs.Worker.template") whose JSON type is not what a PodTemplateSpec allows.
absl::Status CheckPodTemplate(const nlohmann::json& pod_template, const std::string& path);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_POD_TEMPLATE_H_
