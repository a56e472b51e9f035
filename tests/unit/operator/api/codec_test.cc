#include "operator/api/codec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json Minimal() {
  return json::parse(R"({
    "apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
    "metadata": {"name": "dist", "namespace": "ml", "uid": "u1", "generation": 3},
    "spec": {"replicaSpecs": {"Worker": {"template": {"spec": {"containers": [{"name": "t"}]}}}}}
  })");
}

TEST(CodecTest, DecodesMinimalJobWithApiDefaults) {
  absl::StatusOr<DistributedTraining> job = DecodeJob(Minimal());
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->metadata.name, "dist");
  EXPECT_EQ(job->metadata.namespace_name, "ml");
  EXPECT_EQ(job->metadata.generation, 3);
  const ReplicaSpec& worker = job->spec.replica_specs.at(ReplicaType::kWorker);
  EXPECT_EQ(worker.replicas, 1);
  EXPECT_EQ(worker.restart_policy, RestartPolicy::kNever);
  EXPECT_EQ(job->spec.run_policy.clean_pod_policy, CleanPodPolicy::kRunning);
  EXPECT_FALSE(job->spec.run_policy.suspend);
  EXPECT_EQ(job->spec.success_policy, SuccessPolicy::kDefault);
  EXPECT_TRUE(job->spec.tf_config.evaluator_in_cluster);
}

TEST(CodecTest, DecodesEveryRunPolicyField) {
  json j = Minimal();
  j["spec"]["runPolicy"] = json::parse(R"({"cleanPodPolicy": "All", "ttlSecondsAfterFinished": 60,
      "activeDeadlineSeconds": 600, "backoffLimit": 2, "suspend": true,
      "nodeLossTolerationSeconds": 12, "oomPolicy": {"memoryFactor": 1.5, "maxMemory": "8Gi"},
      "schedulingPolicy": {"minAvailable": 3, "queue": "q", "priorityClass": "high",
                           "scheduleTimeoutSeconds": 30}})");
  j["spec"]["successPolicy"] = "AllWorkers";
  j["spec"]["tfConfig"] = {{"evaluatorInCluster", false}};
  absl::StatusOr<DistributedTraining> job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  const RunPolicy& run = job->spec.run_policy;
  EXPECT_EQ(run.clean_pod_policy, CleanPodPolicy::kAll);
  EXPECT_EQ(run.ttl_seconds_after_finished, 60);
  EXPECT_EQ(run.active_deadline_seconds, 600);
  EXPECT_EQ(run.backoff_limit, 2);
  EXPECT_EQ(run.node_loss_toleration_seconds, 12);
  EXPECT_TRUE(run.suspend);
  ASSERT_TRUE(run.scheduling_policy.has_value());
  EXPECT_EQ(run.scheduling_policy->min_available, 3);
  EXPECT_EQ(run.scheduling_policy->queue, "q");
  EXPECT_EQ(run.scheduling_policy->priority_class, "high");
  EXPECT_EQ(run.scheduling_policy->schedule_timeout_seconds, 30);
  EXPECT_EQ(job->spec.success_policy, SuccessPolicy::kAllWorkers);
  EXPECT_FALSE(job->spec.tf_config.evaluator_in_cluster);
  EXPECT_EQ(run.oom_policy, (OomPolicy{.memory_factor = 1.5,
                                       .max_memory = "8Gi",
                                       .max_memory_milli = (8LL << 30) * 1000}));
  j["spec"]["runPolicy"]["oomPolicy"] = {{"maxMemory", 1073741824}};
  job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.run_policy.oom_policy->memory_factor, 2) << "the default";
  EXPECT_EQ(job->spec.run_policy.oom_policy->max_memory_milli, (1LL << 30) * 1000);
  j["spec"]["runPolicy"]["oomPolicy"] = {{"maxMemory", "lots"}};
  EXPECT_EQ(DecodeJob(j).status().message(),
            "spec.runPolicy.oomPolicy.maxMemory: \"lots\" is not a resource quantity");
}

TEST(CodecTest, DecodesTheNetworkPolicy) {
  absl::StatusOr<DistributedTraining> unset = DecodeJob(Minimal());
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->spec.network_policy.enabled.has_value());  // the operator's default
  EXPECT_EQ(unset->spec.network_policy.job_ports, JobPorts::kTfConfig);
  json j = Minimal();
  j["spec"]["networkPolicy"] = json::parse(R"({"enabled": false, "jobPorts": "All",
      "metricsFrom": [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}]})");
  absl::StatusOr<DistributedTraining> job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.network_policy.enabled, false);
  EXPECT_EQ(job->spec.network_policy.job_ports, JobPorts::kAll);
  ASSERT_EQ(job->spec.network_policy.metrics_from.size(), 1u);
  EXPECT_EQ(job->spec.network_policy.metrics_from[0]["namespaceSelector"]["matchLabels"]["name"],
            "monitoring");
}

TEST(CodecTest, ReadsTls) {
  absl::StatusOr<DistributedTraining> unset = DecodeJob(Minimal());
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->spec.tls.enabled);
  json j = Minimal();
  j["spec"]["tls"] = {{"enabled", true}};
  absl::StatusOr<DistributedTraining> job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(job->spec.tls.enabled);
}

TEST(CodecTest, ReadsTheElasticPolicy) {
  absl::StatusOr<DistributedTraining> unset = DecodeJob(Minimal());
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->spec.elastic_policy.has_value());
  json j = Minimal();
  j["spec"]["elasticPolicy"] = {{"minReplicas", 2}, {"maxReplicas", 8}};
  absl::StatusOr<DistributedTraining> job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.elastic_policy, (ElasticPolicy{2, 8}));
  j["spec"]["elasticPolicy"]["maxReplicas"] = "many";
  EXPECT_THAT(std::string(DecodeJob(j).status().message()),
              HasSubstr("spec.elasticPolicy.maxReplicas"));
}

TEST(CodecTest, KeepsEveryTemplateFieldAsWritten) {
  json j = Minimal();
  json tmpl = json::parse(R"({"metadata": {"labels": {"team": "a"}}, "spec": {
      "containers": [{"name": "t", "futureField": {"x": 1}}], "nodeSelector": {"gpu": "h100"},
      "someNewPodField": true}})");
  j["spec"]["replicaSpecs"]["Worker"]["template"] = tmpl;
  absl::StatusOr<DistributedTraining> job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.replica_specs.at(ReplicaType::kWorker).pod_template, tmpl);
}

struct BadField {
  std::string name;
  std::string pointer;  // JSON pointer into Minimal()
  json value;
  std::string message;
};

class CodecErrorTest : public ::testing::TestWithParam<BadField> {};

TEST_P(CodecErrorTest, NamesTheFieldAtFault) {
  json j = Minimal();
  j[json::json_pointer(GetParam().pointer)] = GetParam().value;
  absl::StatusOr<DistributedTraining> job = DecodeJob(j);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CodecErrorTest,
    ::testing::Values(
        BadField{"ReplicasNotInteger", "/spec/replicaSpecs/Worker/replicas", "three",
                 "spec.replicaSpecs.Worker.replicas: must be an integer"},
        BadField{"UnknownRestartPolicy", "/spec/replicaSpecs/Worker/restartPolicy", "Sometimes",
                 "spec.replicaSpecs.Worker.restartPolicy: unsupported value \"Sometimes\""},
        BadField{"UnknownRole", "/spec/replicaSpecs/Master", json::object(),
                 "unknown role \"Master\""},
        BadField{"UnknownCleanPodPolicy", "/spec/runPolicy/cleanPodPolicy", "Some",
                 "spec.runPolicy.cleanPodPolicy: unsupported value \"Some\""},
        BadField{"SuspendNotBool", "/spec/runPolicy/suspend", "yes",
                 "spec.runPolicy.suspend: must be true or false"},
        BadField{"UnknownSuccessPolicy", "/spec/successPolicy", "Chief",
                 "spec.successPolicy: unsupported value \"Chief\""},
        BadField{"TemplateNotObject", "/spec/replicaSpecs/Worker/template", "pod",
                 "spec.replicaSpecs.Worker.template: must be an object"},
        BadField{"WrongKind", "/kind", "TFJob",
                 "want apiVersion disttrain.io/v1 kind DistributedTraining"},
        BadField{"ReplicaSpecsNotMap", "/spec/replicaSpecs", json::array(),
                 "spec.replicaSpecs: must be a map"},
        BadField{"NetworkPolicyEnabledNotBool", "/spec/networkPolicy/enabled", "yes",
                 "spec.networkPolicy.enabled: must be true or false"},
        BadField{"TlsEnabledNotBool", "/spec/tls/enabled", "yes",
                 "spec.tls.enabled: must be true or false"},
        BadField{"UnknownJobPorts", "/spec/networkPolicy/jobPorts", "Some",
                 "spec.networkPolicy.jobPorts: unsupported value \"Some\""},
        BadField{"MetricsFromNotList", "/spec/networkPolicy/metricsFrom", json::object(),
                 "spec.networkPolicy.metricsFrom: must be a list of NetworkPolicy peers"},
        BadField{"MetricsFromEmptyPeer", "/spec/networkPolicy/metricsFrom",
                 json::array({json::object()}),
                 "spec.networkPolicy.metricsFrom[0]: must be a NetworkPolicy peer"}),
    [](const auto& info) { return info.param.name; });

// Every field the operator reads from a template, with the wrong JSON type: decoding names it
// instead of an exception escaping later (a number as a container name used to end the process).
INSTANTIATE_TEST_SUITE_P(
    Templates, CodecErrorTest,
    ::testing::Values(
        BadField{"ContainerNameNumber", "/spec/replicaSpecs/Worker/template/spec/containers/0/name",
                 7, "spec.replicaSpecs.Worker.template.spec.containers[0].name: must be a string"},
        BadField{"ContainerNameMissing", "/spec/replicaSpecs/Worker/template/spec/containers/0",
                 json{{"image", "x"}},
                 "spec.replicaSpecs.Worker.template.spec.containers[0].name: is required"},
        BadField{"ContainerNotObject", "/spec/replicaSpecs/Worker/template/spec/containers/0", "t",
                 "spec.replicaSpecs.Worker.template.spec.containers[0]: must be an object"},
        BadField{"ContainersNotList", "/spec/replicaSpecs/Worker/template/spec/containers",
                 json{{"name", "t"}},
                 "spec.replicaSpecs.Worker.template.spec.containers: must be a list"},
        BadField{"ImageNumber", "/spec/replicaSpecs/Worker/template/spec/containers/0/image", 3,
                 "containers[0].image: must be a string"},
        BadField{"EnvNotList", "/spec/replicaSpecs/Worker/template/spec/containers/0/env",
                 json{{"A", "b"}}, "containers[0].env: must be a list"},
        BadField{"EnvEntryNotObject", "/spec/replicaSpecs/Worker/template/spec/containers/0/env",
                 json::array({"A=b"}), "containers[0].env[0]: must be an object"},
        BadField{"EnvNameNumber", "/spec/replicaSpecs/Worker/template/spec/containers/0/env",
                 json::array({json{{"name", 1}, {"value", "b"}}}),
                 "containers[0].env[0].name: must be a string"},
        BadField{"EnvValueNumber", "/spec/replicaSpecs/Worker/template/spec/containers/0/env",
                 json::array({json{{"name", "A"}, {"value", 1}}}),
                 "containers[0].env[0].value: must be a string"},
        BadField{"EnvValueFromString", "/spec/replicaSpecs/Worker/template/spec/containers/0/env",
                 json::array({json{{"name", "A"}, {"valueFrom", "x"}}}),
                 "containers[0].env[0].valueFrom: must be an object"},
        BadField{"PortsNotList", "/spec/replicaSpecs/Worker/template/spec/containers/0/ports", 2222,
                 "containers[0].ports: must be a list"},
        BadField{"PortNameNumber", "/spec/replicaSpecs/Worker/template/spec/containers/0/ports",
                 json::array({json{{"name", 5}, {"containerPort", 2222}}}),
                 "containers[0].ports[0].name: must be a string"},
        BadField{"ContainerPortString",
                 "/spec/replicaSpecs/Worker/template/spec/containers/0/ports",
                 json::array({json{{"name", "tfjob-port"}, {"containerPort", "2222"}}}),
                 "containers[0].ports[0].containerPort: must be an integer"},
        BadField{"ResourcesList", "/spec/replicaSpecs/Worker/template/spec/containers/0/resources",
                 json::array({"cpu"}), "containers[0].resources: must be an object"},
        BadField{"LimitsString", "/spec/replicaSpecs/Worker/template/spec/containers/0/resources",
                 json{{"limits", "1"}}, "containers[0].resources.limits: must be a map"},
        BadField{"GpuQuantityBool",
                 "/spec/replicaSpecs/Worker/template/spec/containers/0/resources",
                 json{{"requests", {{"nvidia.com/gpu", true}}}},
                 "containers[0].resources.requests[\"nvidia.com/gpu\"]: must be a quantity"},
        BadField{"ArgsString", "/spec/replicaSpecs/Worker/template/spec/containers/0/args",
                 "--steps=1", "containers[0].args: must be a list of strings"},
        BadField{"CommandNumberItem",
                 "/spec/replicaSpecs/Worker/template/spec/containers/0/command",
                 json::array({"python", 3}), "containers[0].command[1]: must be a string"},
        BadField{"InitContainerNameNumber",
                 "/spec/replicaSpecs/Worker/template/spec/initContainers",
                 json::array({json{{"name", 1}}}), "spec.initContainers[0].name: must be a string"},
        BadField{"LabelValueNumber", "/spec/replicaSpecs/Worker/template/metadata",
                 json{{"labels", {{"team", 1}}}},
                 "template.metadata.labels[\"team\"]: must be a string"},
        BadField{"AnnotationsList", "/spec/replicaSpecs/Worker/template/metadata",
                 json{{"annotations", json::array()}},
                 "template.metadata.annotations: must be a map"},
        BadField{"MetadataString", "/spec/replicaSpecs/Worker/template/metadata", "m",
                 "spec.replicaSpecs.Worker.template.metadata: must be an object"},
        BadField{"PodSpecList", "/spec/replicaSpecs/Worker/template/spec", json::array(),
                 "spec.replicaSpecs.Worker.template.spec: must be an object"},
        BadField{"RestartPolicyNumber", "/spec/replicaSpecs/Worker/template/spec/restartPolicy", 1,
                 "template.spec.restartPolicy: must be a string"},
        BadField{"PriorityClassNumber", "/spec/replicaSpecs/Worker/template/spec/priorityClassName",
                 1, "template.spec.priorityClassName: must be a string"}),
    [](const auto& info) { return info.param.name; });

TEST(CodecTest, StatusRoundTrips) {
  JobStatus status;
  status.state = "Running";
  status.conditions.push_back(
      {"Created", true, "JobCreated", "created", absl::FromUnixSeconds(100)});
  status.conditions.push_back(
      {"Running", true, "PodsRunning", "all 4 pods run", absl::FromUnixSeconds(160)});
  status.replica_statuses[ReplicaType::kWorker] = {3, 1, 0, 2, "3/4", {0, 2}, 1};
  status.replica_statuses[ReplicaType::kPS].resized.push_back(
      {.index = 1, .memory = "2Gi", .oom_kills = 1, .pod_uid = "u"});
  status.start_time = absl::FromUnixSeconds(120);
  status.observed_generation = 2;
  status.worker_selector = "disttrain.io/job-name=d,disttrain.io/replica-type=worker";
  json encoded = EncodeStatus(status);
  EXPECT_EQ(encoded["conditions"][1]["lastTransitionTime"], "1970-01-01T00:02:40Z");
  EXPECT_EQ(encoded["workerSelector"], status.worker_selector);
  EXPECT_EQ(encoded["replicaStatuses"]["Worker"]["progress"], "3/4");
  EXPECT_EQ(encoded["replicaStatuses"]["PS"]["resized"],
            json::parse(R"([{"index":1,"memory":"2Gi","oomKills":1,"podUID":"u"}])"));
  EXPECT_FALSE(encoded.contains("completionTime"));
  absl::StatusOr<JobStatus> decoded = DecodeStatus(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, status);
}

TEST(CodecTest, ResultRoundTripsWithOnlyTheFieldsKnown) {
  JobStatus status;
  status.result = JobResult{.global_step = 1000, .loss = 0.25, .accuracy = 0.875};
  json encoded = EncodeStatus(status);
  EXPECT_EQ(encoded["result"], json::parse(R"({"globalStep":1000,"loss":0.25,"accuracy":0.875,
      "display":{"loss":"0.25","accuracy":"0.875"}})"));
  absl::StatusOr<JobStatus> decoded = DecodeStatus(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->result, status.result);
  EXPECT_FALSE(EncodeStatus(JobStatus{}).contains("result"));
  EXPECT_EQ(DecodeResult(json::parse(R"({"loss":"low"})")).status().message(),
            "status.result.loss: must be a number");
}

TEST(CodecTest, ProgressRoundTripsThroughTheApiWithItsDisplay) {
  JobStatus status;
  const absl::Time read = absl::FromUnixSeconds(1'800'000'000);
  status.progress = JobProgress{.global_step = 1200,
                                .target_steps = 2000,
                                .steps_per_second = 41.25,
                                .examples_per_second = 1320,
                                .estimated_completion_time = read + absl::Seconds(250),
                                .observe_time = read};
  json stored = json::parse(EncodeStatus(status).dump());
  EXPECT_EQ(stored["progress"]["percent"], 60);
  EXPECT_EQ(stored["progress"]["display"],
            json::parse(R"j({"progress":"60% (1200/2000)","remaining":"4m10s"})j"));
  absl::StatusOr<JobStatus> decoded = DecodeStatus(stored);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->progress, status.progress) << "else every pass would write it again";

  status.progress = JobProgress{.global_step = 7, .observe_time = read};
  EXPECT_EQ(EncodeStatus(status)["progress"],
            json::parse(R"({"globalStep":7,"observeTime":"2027-01-15T08:00:00Z",
                            "display":{"progress":"step 7"}})"));
  EXPECT_FALSE(EncodeStatus(JobStatus{}).contains("progress"));
  EXPECT_EQ(DecodeProgress(json::parse(R"({"globalStep":"x"})")).status().message(),
            "status.progress.globalStep: must be an integer");
}

TEST(CodecTest, ResultKeepsFullPrecisionAndDisplaysFourSignificantDigits) {
  JobStatus status;
  status.result = JobResult{.global_step = 1500, .loss = 0.3738555521875494, .accuracy = 0.84563};
  // What the API server stores: the text of the patch.
  json stored = json::parse(EncodeStatus(status).dump());
  EXPECT_EQ(stored["result"]["loss"].get<double>(), 0.3738555521875494) << "for programs";
  EXPECT_EQ(stored["result"]["display"], json::parse(R"({"loss":"0.3739","accuracy":"0.8456"})"))
      << "for the printer columns";
  absl::StatusOr<JobStatus> decoded = DecodeStatus(stored);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->result, status.result);

  // A status an older operator wrote has no display: it decodes to the same result.
  stored["result"].erase("display");
  decoded = DecodeStatus(stored);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->result, status.result);

  status.result = JobResult{.global_step = 1500};
  EXPECT_FALSE(EncodeStatus(status)["result"].contains("display")) << "no figure to display";
}

TEST(CodecTest, AClickThroughModelsResultRoundTripsWithItsAuc) {
  JobStatus status;
  status.result = JobResult{
      .global_step = 2000, .loss = 0.5, .train_auc = 0.81, .auc = 0.78123, .log_loss = 0.556};
  json stored = json::parse(EncodeStatus(status).dump());
  EXPECT_EQ(stored["result"]["auc"].get<double>(), 0.78123);
  EXPECT_EQ(stored["result"]["display"], json::parse(R"({"loss":"0.5","auc":"0.7812"})"))
      << "for the AUC printer column";
  absl::StatusOr<JobStatus> decoded = DecodeStatus(stored);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->result, status.result);
}

}  // namespace
}  // namespace disttrain::api
