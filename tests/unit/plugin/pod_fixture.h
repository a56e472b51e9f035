// The objects the kubectl plugin's tests read: a job's pod as the API server serves it, and
// times as RFC 3339.
#ifndef DISTTRAIN_TESTS_UNIT_PLUGIN_POD_FIXTURE_H_
#define DISTTRAIN_TESTS_UNIT_PLUGIN_POD_FIXTURE_H_

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace disttrain::plugin::testing {

// Pod `index` of `role` of job "mnist" on node-1: a sidecar, then the main container
// "tensorflow" in `container_state` after `restarts` restarts.
inline nlohmann::json Pod(const std::string& role, int index, const std::string& phase,
                          nlohmann::json container_state, int restarts = 0) {
  return {
      {"metadata",
       {{"name", "mnist-" + role + "-" + std::to_string(index)},
        {"uid", role + std::to_string(index)},
        {"creationTimestamp", "2026-11-22T10:00:00Z"},
        {"labels",
         {{"disttrain.io/replica-type", role},
          {"disttrain.io/replica-index", std::to_string(index)}}}}},
      {"spec",
       {{"nodeName", "node-1"}, {"containers", {{{"name", "sidecar"}}, {{"name", "tensorflow"}}}}}},
      {"status",
       {{"phase", phase},
        {"conditions", {{{"type", "Ready"}, {"status", phase == "Running" ? "True" : "False"}}}},
        {"containerStatuses",
         {{{"name", "sidecar"},
           {"restartCount", 9},
           {"state", {{"running", nlohmann::json::object()}}}},
          {{"name", "tensorflow"}, {"restartCount", restarts}, {"state", container_state}}}}}}};
}

// The time an RFC 3339 string names; a string that does not parse fails the test.
inline absl::Time At(const std::string& rfc3339) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) << err;
  return t;
}

}  // namespace disttrain::plugin::testing

#endif  // DISTTRAIN_TESTS_UNIT_PLUGIN_POD_FIXTURE_H_
