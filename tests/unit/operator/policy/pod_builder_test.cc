#include "operator/policy/pod_builder.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::JobBuilder;

// The value of env var `name` in container `c`, or "<unset>".
std::string Env(const json& pod, int c, const std::string& name) {
  const json& container = pod["spec"]["containers"][c];
  if (!container.contains("env")) return "<unset>";
  for (const json& e : container["env"]) {
    if (e["name"] == name) return e.value("value", "");
  }
  return "<unset>";
}

json Build(const api::DistributedTraining& job, ReplicaType type, int index,
           std::vector<BuildWarning>* warnings = nullptr) {
  absl::StatusOr<BuiltPod> built = BuildPod(job, type, index, BuildOptions{});
  EXPECT_TRUE(built.ok()) << built.status();
  if (warnings) *warnings = built->warnings;
  return built->pod;
}

TEST(PodBuilderTest, NamesLabelsAndOwnsThePod) {
  json pod = Build(JobBuilder("dist", "ml").Chief().Ps(2).Workers(3).Build(), ReplicaType::kPS, 1);
  EXPECT_EQ(pod["metadata"]["name"], "dist-ps-1");
  EXPECT_EQ(pod["metadata"]["namespace"], "ml");
  const json& labels = pod["metadata"]["labels"];
  EXPECT_EQ(labels["disttrain.io/job-name"], "dist");
  EXPECT_EQ(labels["disttrain.io/replica-type"], "ps");
  EXPECT_EQ(labels["disttrain.io/replica-index"], "1");
  EXPECT_FALSE(labels.contains("disttrain.io/job-role"));
  const json& owner = pod["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "DistributedTraining");
  EXPECT_EQ(owner["apiVersion"], "disttrain.io/v1");
  EXPECT_EQ(owner["uid"], "uid-1234");
  EXPECT_EQ(owner["controller"], true);
}

TEST(PodBuilderTest, MarksTheChiefOrWorkerZeroWithTheJobRole) {
  json chief = Build(JobBuilder("d").Chief().Workers(2).Build(), ReplicaType::kChief, 0);
  EXPECT_EQ(chief["metadata"]["labels"]["disttrain.io/job-role"], "chief");
  json w0 = Build(JobBuilder("d").Chief().Workers(2).Build(), ReplicaType::kWorker, 0);
  EXPECT_FALSE(w0["metadata"]["labels"].contains("disttrain.io/job-role"));
  json w0_no_chief = Build(JobBuilder("d").Ps(1).Workers(2).Build(), ReplicaType::kWorker, 0);
  EXPECT_EQ(w0_no_chief["metadata"]["labels"]["disttrain.io/job-role"], "chief");
}

TEST(PodBuilderTest, KeepsEveryTemplateFieldAndTheUsersLabels) {
  json tmpl = json::parse(R"({"metadata": {"labels": {"team": "vision"}, "annotations": {"a": "b"}},
    "spec": {"nodeSelector": {"gpu": "h100"}, "someFutureField": {"x": 1},
      "containers": [{"name": "tensorflow", "image": "t", "args": ["--steps=5"], "futureField": 1}]}})");
  json pod = Build(JobBuilder("d").Workers(2).Template(ReplicaType::kWorker, tmpl).Build(),
                   ReplicaType::kWorker, 0);
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "vision");
  EXPECT_EQ(pod["metadata"]["annotations"]["a"], "b");
  EXPECT_EQ(pod["spec"]["nodeSelector"]["gpu"], "h100");
  EXPECT_EQ(pod["spec"]["someFutureField"]["x"], 1);
  EXPECT_EQ(pod["spec"]["containers"][0]["futureField"], 1);
  EXPECT_EQ(pod["spec"]["containers"][0]["args"][0], "--steps=5");
}

TEST(PodBuilderTest, MapsTheRolesRestartPolicyOntoThePod) {
  struct {
    api::RestartPolicy role;
    const char* pod;
  } cases[] = {{api::RestartPolicy::kNever, "Never"},
               {api::RestartPolicy::kOnFailure, "OnFailure"},
               {api::RestartPolicy::kAlways, "Always"},
               {api::RestartPolicy::kExitCode, "Never"}};
  for (const auto& c : cases) {
    json pod = Build(JobBuilder("d").Workers(2).RestartPolicy(ReplicaType::kWorker, c.role).Build(),
                     ReplicaType::kWorker, 0);
    EXPECT_EQ(pod["spec"]["restartPolicy"], c.pod) << api::RestartPolicyName(c.role);
  }
}

TEST(PodBuilderTest, InjectsTfConfigIntoTheMainContainerOnly) {
  json tmpl = json::parse(R"({"spec": {"containers": [
      {"name": "sidecar", "image": "s"},
      {"name": "trainer", "image": "t", "env": [{"name": "KEEP", "value": "1"}]}]}})");
  json pod = Build(JobBuilder("d").Ps(1).Workers(2).Template(ReplicaType::kWorker, tmpl).Build(),
                   ReplicaType::kWorker, 1);
  EXPECT_EQ(Env(pod, 0, "TF_CONFIG"), "<unset>");
  EXPECT_EQ(Env(pod, 1, "KEEP"), "1");
  EXPECT_THAT(Env(pod, 1, "TF_CONFIG"), HasSubstr(R"("task":{"type":"worker","index":1})"));
}

TEST(PodBuilderTest, ReplacesAUserTfConfigAndSaysSo) {
  json tmpl = json::parse(R"({"spec": {"containers": [{"name": "tensorflow", "image": "t",
      "env": [{"name": "A", "value": "1"}, {"name": "TF_CONFIG", "value": "{}"}, {"name": "B", "value": "2"}]}]}})");
  std::vector<BuildWarning> warnings;
  json pod = Build(JobBuilder("d").Ps(1).Workers(1).Template(ReplicaType::kWorker, tmpl).Build(),
                   ReplicaType::kWorker, 0, &warnings);
  EXPECT_THAT(Env(pod, 0, "TF_CONFIG"), HasSubstr("\"cluster\""));
  EXPECT_EQ(Env(pod, 0, "A"), "1");
  EXPECT_EQ(Env(pod, 0, "B"), "2");
  EXPECT_EQ(pod["spec"]["containers"][0]["env"].size(),
            5u);  // A, TF_CONFIG, B, CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].reason, "TFConfigReplaced");
  EXPECT_THAT(warnings[0].message,
              HasSubstr("replaced the TF_CONFIG set in container \"tensorflow\""));
}

TEST(PodBuilderTest, OneReplicaJobGetsNoTfConfig) {
  json pod = Build(JobBuilder("solo").Workers(1).Build(), ReplicaType::kWorker, 0);
  EXPECT_EQ(Env(pod, 0, "TF_CONFIG"), "<unset>");
}

TEST(PodBuilderTest, HidesGpusFromPodsThatRequestNone) {
  json gpu_tmpl = json::parse(R"({"spec": {"containers": [{"name": "tensorflow", "image": "t",
      "resources": {"limits": {"nvidia.com/gpu": 2}}}]}})");
  json zero_tmpl = json::parse(R"({"spec": {"containers": [{"name": "tensorflow", "image": "t",
      "resources": {"limits": {"nvidia.com/gpu": "0"}}}]}})");
  json user_tmpl = json::parse(R"({"spec": {"containers": [{"name": "tensorflow", "image": "t",
      "env": [{"name": "CUDA_VISIBLE_DEVICES", "value": "3"}]}]}})");
  auto job = JobBuilder("d")
                 .Ps(1)
                 .Workers(1)
                 .Chief()
                 .Template(ReplicaType::kWorker, gpu_tmpl)
                 .Template(ReplicaType::kChief, zero_tmpl)
                 .Build();
  json ps = Build(job, ReplicaType::kPS, 0);
  EXPECT_EQ(Env(ps, 0, "CUDA_VISIBLE_DEVICES"), "");
  json worker = Build(job, ReplicaType::kWorker, 0);
  EXPECT_EQ(Env(worker, 0, "CUDA_VISIBLE_DEVICES"), "<unset>");
  EXPECT_EQ(worker["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], 2);
  json chief = Build(job, ReplicaType::kChief, 0);
  EXPECT_EQ(Env(chief, 0, "CUDA_VISIBLE_DEVICES"), "");
  json user = Build(JobBuilder("d").Ps(1).Workers(1).Template(ReplicaType::kPS, user_tmpl).Build(),
                    ReplicaType::kPS, 0);
  EXPECT_EQ(Env(user, 0, "CUDA_VISIBLE_DEVICES"), "3");
}

TEST(PodBuilderTest, MasksGpusFromTheNvidiaRuntimeForPodsThatRequestNone) {
  json gpu_tmpl = json::parse(R"({"spec": {"containers": [{"name": "tensorflow", "image": "t",
      "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]}})");
  json user_tmpl = json::parse(R"({"spec": {"containers": [{"name": "tensorflow", "image": "t",
      "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}]}})");
  auto job = JobBuilder("d").Ps(1).Workers(1).Template(ReplicaType::kWorker, gpu_tmpl).Build();
  json ps = Build(job, ReplicaType::kPS, 0);
  EXPECT_EQ(Env(ps, 0, "NVIDIA_VISIBLE_DEVICES"), "void");
  json worker = Build(job, ReplicaType::kWorker, 0);
  EXPECT_EQ(Env(worker, 0, "NVIDIA_VISIBLE_DEVICES"), "<unset>")
      << "the device plugin sets it for the GPUs it allocates";
  EXPECT_EQ(worker["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(worker["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
  json user = Build(JobBuilder("d").Ps(1).Workers(1).Template(ReplicaType::kPS, user_tmpl).Build(),
                    ReplicaType::kPS, 0);
  EXPECT_EQ(Env(user, 0, "NVIDIA_VISIBLE_DEVICES"), "all");
}

json Toleration(const std::string& key, int64_t seconds) {
  return {{"key", key},
          {"operator", "Exists"},
          {"effect", "NoExecute"},
          {"tolerationSeconds", seconds}};
}

TEST(PodBuilderTest, ToleratesALostNodeForRunPolicysSeconds) {
  api::DistributedTraining job = JobBuilder("d").Ps(1).Workers(2).Build();
  job.spec.run_policy.node_loss_toleration_seconds = 30;
  for (ReplicaType type : {ReplicaType::kPS, ReplicaType::kWorker}) {
    json pod = Build(job, type, 0);
    EXPECT_EQ(pod["spec"]["tolerations"],
              json::array({Toleration("node.kubernetes.io/unreachable", 30),
                           Toleration("node.kubernetes.io/not-ready", 30)}));
  }
  job.spec.run_policy.node_loss_toleration_seconds.reset();  // a TFJob's: Kubernetes' 300 s
  EXPECT_FALSE(Build(job, ReplicaType::kPS, 0)["spec"].contains("tolerations"));
}

TEST(PodBuilderTest, TheTemplatesOwnLostNodeTolerationWins) {
  api::DistributedTraining job = JobBuilder("d").Ps(1).Workers(1).Build();
  job.spec.run_policy.node_loss_toleration_seconds = 30;
  json gpu = {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  json& tolerations =
      job.spec.replica_specs.at(ReplicaType::kWorker).pod_template["spec"]["tolerations"];
  tolerations = json::array({gpu, Toleration("node.kubernetes.io/unreachable", 600)});
  EXPECT_EQ(Build(job, ReplicaType::kWorker, 0)["spec"]["tolerations"],
            json::array({gpu, Toleration("node.kubernetes.io/unreachable", 600),
                         Toleration("node.kubernetes.io/not-ready", 30)}));
  // A toleration of every taint (no key, Exists) covers both.
  tolerations = json::array({{{"operator", "Exists"}}});
  EXPECT_EQ(Build(job, ReplicaType::kWorker, 0)["spec"]["tolerations"], tolerations);
  // One for NoSchedule only does not.
  tolerations = json::array({{{"key", "node.kubernetes.io/not-ready"},
                              {"operator", "Exists"},
                              {"effect", "NoSchedule"}}});
  EXPECT_EQ(Build(job, ReplicaType::kWorker, 0)["spec"]["tolerations"].size(), 3u);
}

TEST(PodBuilderTest, GangSchedulingNamesThePodGroupAndPriority) {
  api::SchedulingPolicy policy;
  policy.priority_class = "high";
  json pod =
      Build(JobBuilder("d").Ps(1).Workers(1).Scheduling(policy).Build(), ReplicaType::kPS, 0);
  EXPECT_EQ(pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"], "d");
  EXPECT_EQ(pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"], "d");
  EXPECT_EQ(pod["spec"]["priorityClassName"], "high");
  json plain = Build(JobBuilder("d").Ps(1).Workers(1).Build(), ReplicaType::kPS, 0);
  EXPECT_FALSE(plain["metadata"].contains("annotations"));
  EXPECT_FALSE(plain["spec"].contains("priorityClassName"));
}

TEST(PodBuilderTest, KubernetesGangsNameThePodGroupInTheSchedulingGroup) {
  BuildOptions options;
  options.gang_scheduler = GangScheduler::kKubernetes;
  const api::DistributedTraining gang =
      JobBuilder("d").Ps(1).Workers(1).Scheduling(api::SchedulingPolicy{}).Build();
  absl::StatusOr<BuiltPod> pod = BuildPod(gang, ReplicaType::kWorker, 0, options);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->pod["spec"]["schedulingGroup"], json({{"podGroupName", "d"}}));
  absl::StatusOr<BuiltPod> volcano = BuildPod(gang, ReplicaType::kWorker, 0, BuildOptions{});
  ASSERT_TRUE(volcano.ok());
  EXPECT_FALSE(volcano->pod["spec"].contains("schedulingGroup"));
  absl::StatusOr<BuiltPod> plain =
      BuildPod(JobBuilder("d").Ps(1).Workers(1).Build(), ReplicaType::kWorker, 0, options);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->pod["spec"].contains("schedulingGroup"));
}

}  // namespace
}  // namespace disttrain::policy
