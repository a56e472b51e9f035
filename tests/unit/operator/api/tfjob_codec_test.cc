#include "operator/api/tfjob_codec.h"

#include "gtest/gtest.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"

namespace disttrain::api {
namespace {

using nlohmann::json;

json Container() { return {{"name", "tensorflow"}, {"image", "tf:2"}}; }

json TfJob(json replicas, json run_policy = json::object()) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "TFJob"},
          {"metadata", {{"name", "mnist"}, {"namespace", "ns"}, {"uid", "u1"}}},
          {"spec", {{"runPolicy", run_policy}, {"tfReplicaSpecs", replicas}}}};
}

json Replica(json extra = json::object()) {
  json r = {{"template", {{"spec", {{"containers", {Container()}}}}}}};
  r.update(extra);
  return r;
}

TEST(TfJobCodecTest, DecodesIntoTheSameJobWithTfJobsDefaults) {
  absl::StatusOr<DistributedTraining> job = DecodeTfJob(
      TfJob({{"chief", Replica()}, {"Ps", Replica({{"replicas", 2}})}, {"Worker", Replica()}}));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->kind, &kTfJobKind);
  EXPECT_EQ(job->metadata.name, "mnist");
  ASSERT_EQ(job->spec.replica_specs.size(), 3u);
  EXPECT_EQ(job->spec.replica_specs.at(ReplicaType::kChief).replicas, 1);
  EXPECT_EQ(job->spec.replica_specs.at(ReplicaType::kPS).replicas, 2);
  EXPECT_EQ(job->spec.replica_specs.at(ReplicaType::kWorker).restart_policy, RestartPolicy::kNever);
  EXPECT_EQ(job->spec.run_policy.clean_pod_policy, CleanPodPolicy::kNone)
      << "TFJob's default cleanPodPolicy is None";
  EXPECT_FALSE(job->spec.tf_config.sparse_workers);
}

TEST(TfJobCodecTest, AnUnsetBackoffLimitIsUnboundedAsUnderTheTrainingOperator) {
  absl::StatusOr<DistributedTraining> job = DecodeTfJob(TfJob({{"Worker", Replica()}}));
  ASSERT_TRUE(job.ok()) << job.status();
  ApplyDefaults(&*job);
  EXPECT_EQ(job->spec.run_policy.backoff_limit, kTfJobDefaultBackoffLimit);
  job = DecodeTfJob(TfJob({{"Worker", Replica()}}, {{"backoffLimit", 0}}));
  ApplyDefaults(&*job);
  EXPECT_EQ(job->spec.run_policy.backoff_limit, 0);
}

TEST(TfJobCodecTest, ATfJobsPodsKeepKubernetesOwnLostNodeTolerations) {
  absl::StatusOr<DistributedTraining> job = DecodeTfJob(TfJob({{"Worker", Replica()}}));
  ASSERT_TRUE(job.ok()) << job.status();
  ApplyDefaults(&*job);
  EXPECT_FALSE(job->spec.run_policy.node_loss_toleration_seconds.has_value())
      << "the training-operator adds none; the admission plugin gives 300 s";
}

TEST(TfJobCodecTest, ReadsRunPolicyManagedByAndDynamicWorkers) {
  json j = TfJob({{"Worker", Replica()}}, {{"cleanPodPolicy", "Running"},
                                           {"backoffLimit", 3},
                                           {"managedBy", "kubeflow.org/training-operator"}});
  j["spec"]["enableDynamicWorker"] = true;
  j["spec"]["successPolicy"] = "AllWorkers";
  absl::StatusOr<DistributedTraining> job = DecodeTfJob(j);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.run_policy.clean_pod_policy, CleanPodPolicy::kRunning);
  EXPECT_EQ(job->spec.run_policy.backoff_limit, 3);
  EXPECT_EQ(job->spec.managed_by, "") << "the training-operator's semantics are this operator's";
  EXPECT_TRUE(job->spec.tf_config.sparse_workers);
  EXPECT_EQ(job->spec.success_policy, SuccessPolicy::kAllWorkers);

  j["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  EXPECT_EQ(DecodeTfJob(j)->spec.managed_by, "kueue.x-k8s.io/multikueue");
}

TEST(TfJobCodecTest, MasterIsTheChiefUnderItsLegacyName) {
  absl::StatusOr<DistributedTraining> job =
      DecodeTfJob(TfJob({{"Master", Replica()}, {"Worker", Replica()}}));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(job->spec.replica_specs.contains(ReplicaType::kChief));
  EXPECT_TRUE(job->spec.chief_is_master);
  EXPECT_EQ(RoleName(job->spec, ReplicaType::kChief), "master");
  EXPECT_FALSE(DecodeTfJob(TfJob({{"Chief", Replica()}}))->spec.chief_is_master);

  JobStatus s;
  s.replica_statuses[ReplicaType::kChief].succeeded = 1;
  json out = EncodeTfJobStatus(s, job->spec);
  EXPECT_EQ(out["replicaStatuses"]["Master"]["succeeded"], 1);
  EXPECT_FALSE(out["replicaStatuses"].contains("Chief"));
  absl::StatusOr<JobStatus> back = DecodeTfJobStatus(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->replica_statuses[ReplicaType::kChief].succeeded, 1);
}

TEST(TfJobCodecTest, RefusesWhatItCannotRunNamingTheTfJobField) {
  absl::StatusOr<DistributedTraining> job = DecodeTfJob(TfJob({{"Launcher", Replica()}}));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("spec.tfReplicaSpecs: unknown replica type \"Launcher\""),
            std::string::npos)
      << job.status();
  job = DecodeTfJob(TfJob({{"Master", Replica()}, {"chief", Replica()}}));
  EXPECT_NE(job.status().message().find("more than one Chief or Master"), std::string::npos)
      << job.status();
  job = DecodeTfJob(TfJob({{"Worker", Replica({{"replicas", "two"}})}}));
  EXPECT_NE(job.status().message().find("spec.tfReplicaSpecs.Worker.replicas"), std::string::npos)
      << job.status();
  job = DecodeTfJob(TfJob({{"worker", Replica()}, {"Worker", Replica()}}));
  EXPECT_NE(job.status().message().find("given twice"), std::string::npos) << job.status();
  json no_spec = TfJob({});
  no_spec.erase("spec");
  EXPECT_FALSE(DecodeTfJob(no_spec).ok());
  EXPECT_FALSE(DecodeTfJob(json{{"apiVersion", "disttrain.io/v1"}, {"kind", "TFJob"}}).ok());
}

JobStatus Status(const std::string& state) {
  JobStatus s;
  s.conditions = {
      {"Created", true, "JobCreated", "accepted", absl::FromUnixSeconds(10)},
      {"Running", true, "PodsRunning", "all 3 pods are running", absl::FromUnixSeconds(20)},
      {"Restarting", false, "PodsRunning", "again", absl::FromUnixSeconds(30)}};
  s.state = state;
  s.replica_statuses[ReplicaType::kWorker] = {2, 1, 0, 3, "1/3", {0}, 2, 1};
  s.start_time = absl::FromUnixSeconds(15);
  return s;
}

TEST(TfJobCodecTest, EncodesTfJobsReasonsOrderAndCounts) {
  json out = EncodeTfJobStatus(Status("Running"));
  ASSERT_EQ(out["conditions"].size(), 2u) << out.dump() << ": Restarting goes while Running";
  EXPECT_EQ(out["conditions"][0]["reason"], "TFJobCreated");
  EXPECT_EQ(out["conditions"][1]["type"], "Running");
  EXPECT_EQ(out["conditions"][1]["reason"], "TFJobRunning");
  EXPECT_EQ(out["conditions"][1]["message"], "all 3 pods are running");
  EXPECT_EQ(out["conditions"][1]["lastUpdateTime"], "1970-01-01T00:00:20Z");
  EXPECT_EQ(out["replicaStatuses"]["Worker"]["active"], 1) << "TFJob's active: running pods";
  EXPECT_EQ(out["replicaStatuses"]["Worker"]["succeeded"], 1);
  EXPECT_EQ(out["restartingPods"], nullptr);

  JobStatus done = Status("Succeeded");
  done.conditions[1].status = false;
  done.conditions.insert(done.conditions.begin() + 1,
                         {"Succeeded", true, "JobSucceeded", "the chief succeeded"});
  out = EncodeTfJobStatus(done);
  EXPECT_EQ(out["conditions"].back()["type"], "Succeeded") << "the State column reads the last";
  EXPECT_EQ(out["conditions"].back()["reason"], "TFJobSucceeded");
}

TEST(TfJobCodecTest, TheStatusRoundTripsThroughTheEncoding) {
  JobStatus s = Status("Running");
  s.restarting_pods = {"uid-1"};
  json out = EncodeTfJobStatus(s);
  out["lastReconcileTime"] = "1970-01-01T00:01:00Z";
  absl::StatusOr<JobStatus> back = DecodeTfJobStatus(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(EncodeTfJobStatus(*back), EncodeTfJobStatus(s))
      << "what was written reads back as the same: no write on the next pass";
  EXPECT_EQ(back->restarting_pods, s.restarting_pods);
  EXPECT_EQ(back->replica_statuses.at(ReplicaType::kWorker).past_restarts, 2);
}

TEST(TfJobCodecTest, ReadsTheTrainingOperatorsOwnStatus) {
  json theirs = {{"conditions",
                  {{{"type", "Created"}, {"status", "True"}, {"reason", "TFJobCreated"}},
                   {{"type", "Running"}, {"status", "True"}, {"reason", "TFJobRunning"}}}},
                 {"replicaStatuses", {{"Worker", {{"active", 2}}}, {"PS", json::object()}}},
                 {"startTime", "2026-11-26T10:00:00Z"},
                 {"lastReconcileTime", "2026-11-26T10:00:01Z"}};
  absl::StatusOr<JobStatus> s = DecodeTfJobStatus(theirs);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->conditions.size(), 2u);
  EXPECT_EQ(s->replica_statuses.at(ReplicaType::kWorker).running, 2);
  EXPECT_TRUE(s->start_time.has_value());
}

}  // namespace
}  // namespace disttrain::api
