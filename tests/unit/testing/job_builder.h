// Test fixture builder for DistributedTraining jobs:
//   JobBuilder("dist").Chief().Ps(2).Workers(3).Evaluator().Build()
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_JOB_BUILDER_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_JOB_BUILDER_H_

#include <string>
#include <utility>

#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::testing {

class JobBuilder {
 public:
  explicit JobBuilder(std::string name, std::string ns = "default") {
    job_.metadata.name = std::move(name);
    job_.metadata.namespace_name = std::move(ns);
    job_.metadata.uid = "uid-1234";
  }

  JobBuilder& Chief(int n = 1) { return Role(api::ReplicaType::kChief, n); }
  JobBuilder& Ps(int n) { return Role(api::ReplicaType::kPS, n); }
  JobBuilder& Workers(int n) { return Role(api::ReplicaType::kWorker, n); }
  JobBuilder& Evaluator(int n = 1) { return Role(api::ReplicaType::kEvaluator, n); }

  // Adds a role whose main container is "tensorflow" running image "trainer:1".
  JobBuilder& Role(api::ReplicaType type, int n) {
    api::ReplicaSpec& spec = job_.spec.replica_specs[type];
    spec.replicas = n;
    spec.pod_template = {
        {"spec", {{"containers", {{{"name", "tensorflow"}, {"image", "trainer:1"}}}}}}};
    return *this;
  }
  JobBuilder& RestartPolicy(api::ReplicaType type, api::RestartPolicy policy) {
    job_.spec.replica_specs[type].restart_policy = policy;
    return *this;
  }
  // Replaces the template of a role that was already added.
  JobBuilder& Template(api::ReplicaType type, nlohmann::json pod_template) {
    job_.spec.replica_specs[type].pod_template = std::move(pod_template);
    return *this;
  }
  JobBuilder& EvaluatorInCluster(bool in) {
    job_.spec.tf_config.evaluator_in_cluster = in;
    return *this;
  }
  JobBuilder& Scheduling(api::SchedulingPolicy policy) {
    job_.spec.run_policy.scheduling_policy = std::move(policy);
    return *this;
  }
  JobBuilder& SuccessPolicy(api::SuccessPolicy policy) {
    job_.spec.success_policy = policy;
    return *this;
  }
  // One headless Service per replica (a TFJob's, or a job an older operator started).
  JobBuilder& ReplicaServices() {
    job_.addressing = api::Addressing::kReplicaServices;
    return *this;
  }
  api::DistributedTraining Build() const { return job_; }

 private:
  api::DistributedTraining job_;
};

}  // namespace disttrain::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_JOB_BUILDER_H_
