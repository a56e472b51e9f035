// The Workload built for a job: Kueue's name for it, one PodSet per role with what Kueue counts,
// and when a job's change means Kueue must admit it again.
#include "operator/queueing/workload.h"

#include "gtest/gtest.h"
#include "operator/api/codec.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;

api::DistributedTraining Job(const std::string& name = "dist") {
  api::DistributedTraining job;
  job.metadata.name = name;
  job.metadata.namespace_name = "team";
  job.metadata.uid = "job-uid";
  job.metadata.labels[kQueueNameLabel] = "lq";
  return job;
}

json Pod(const std::string& gpus) {
  return {{"metadata", {{"name", "x"}}},
          {"spec",
           {{"containers",
             {{{"name", "tensorflow"},
               {"image", "trainer:1"},
               {"env", {{{"name", "TF_CONFIG"}, {"value", "{...}"}}}},
               {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}},
            {"nodeSelector", {{"zone", "a"}}},
            {"volumes", json::array()}}}};
}

TEST(WorkloadTest, IsNamedAsKueuesOwnJobControllersNameIt) {
  // sha1("DistributedTraining\ndisttrain.io\ndist\njob-uid") starts 6a76f (computed apart).
  EXPECT_EQ(WorkloadName(Job()), "distributedtraining-dist-6a76f");
  const std::string long_name = WorkloadName(Job(std::string(300, 'x')));
  EXPECT_EQ(long_name.size(), 247u + 6u);
}

TEST(WorkloadTest, HasOnePodSetPerRoleWithWhatKueueCounts) {
  json wl =
      BuildWorkload(Job(), {{"chief", 1, Pod("1")}, {"worker", 3, Pod("2")}, {"ps", 0, Pod("0")}},
                    Priority{"high", 1000});
  EXPECT_EQ(wl["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(wl["metadata"]["namespace"], "team");
  EXPECT_EQ(wl["metadata"]["finalizers"], json({kResourceInUseFinalizer}));
  EXPECT_EQ(wl["metadata"]["labels"]["disttrain.io/job-name"], "dist");
  const json& owner = wl["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "DistributedTraining");
  EXPECT_TRUE(owner["blockOwnerDeletion"].get<bool>());
  EXPECT_EQ(wl["spec"]["queueName"], "lq");
  EXPECT_EQ(wl["spec"]["priority"], 1000);
  EXPECT_EQ(wl["spec"]["priorityClassRef"]["kind"], "WorkloadPriorityClass");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 2u) << "a role with no replica is no PodSet";
  const json& worker = wl["spec"]["podSets"][1];
  EXPECT_EQ(worker["name"], "worker");
  EXPECT_EQ(worker["count"], 3);
  const json& spec = worker["template"]["spec"];
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(spec["nodeSelector"]["zone"], "a");
  EXPECT_FALSE(spec["containers"][0].contains("env")) << "TF_CONFIG differs per replica";
  EXPECT_FALSE(spec.contains("volumes"));
}

TEST(WorkloadTest, AnElasticRoleHasAMinCountForPartialAdmission) {
  json wl = BuildWorkload(Job(), {{"chief", 1, Pod("1"), 1}, {"worker", 5, Pod("2"), 2}}, {});
  EXPECT_FALSE(wl["spec"]["podSets"][0].contains("minCount")) << "minCount == count says nothing";
  EXPECT_EQ(wl["spec"]["podSets"][1]["minCount"], 2);
  // It is part of what Kueue admits: a changed minimum replaces the Workload.
  EXPECT_FALSE(
      Matches(wl, BuildWorkload(Job(), {{"chief", 1, Pod("1")}, {"worker", 5, Pod("2"), 3}}, {})));
}

TEST(WorkloadTest, ARoleThatAsksForATopologyCarriesItsRequest) {
  const json request = {{"required", "rack"}, {"podIndexLabel", "disttrain.io/replica-index"}};
  json wl = BuildWorkload(Job(), {{"ps", 1, Pod("1")}, {"worker", 3, Pod("2"), 0, request}}, {});
  EXPECT_FALSE(wl["spec"]["podSets"][0].contains("topologyRequest"));
  EXPECT_EQ(wl["spec"]["podSets"][1]["topologyRequest"], request);
  // It is part of what Kueue admits: a changed request replaces the Workload.
  EXPECT_FALSE(
      Matches(wl, BuildWorkload(Job(), {{"ps", 1, Pod("1")}, {"worker", 3, Pod("2")}}, {})));
}

TEST(WorkloadTest, MatchesUntilReplicasResourcesQueueOrPriorityChange) {
  const json base = BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, std::nullopt);
  EXPECT_TRUE(Matches(base, BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, std::nullopt)));
  EXPECT_FALSE(Matches(base, BuildWorkload(Job(), {{"worker", 3, Pod("1")}}, std::nullopt)));
  EXPECT_FALSE(Matches(base, BuildWorkload(Job(), {{"worker", 2, Pod("2")}}, std::nullopt)));
  api::DistributedTraining moved = Job();
  moved.metadata.labels[kQueueNameLabel] = "other";
  const json other_queue = BuildWorkload(moved, {{"worker", 2, Pod("1")}}, std::nullopt);
  EXPECT_FALSE(Matches(base, other_queue));
  EXPECT_TRUE(SamePodSets(base, other_queue)) << "once admitted, only the PodSets count";
  EXPECT_FALSE(Matches(base, BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, Priority{"high", 1})));
}

TEST(WorkloadTest, AWorkloadBuiltFromThisGenerationQueueAndClassNeedsNoRebuild) {
  api::DistributedTraining job = Job();
  job.metadata.generation = 3;
  const json wl = BuildWorkload(job, {{"worker", 2, Pod("1")}}, std::nullopt);
  EXPECT_TRUE(BuiltFrom(wl, job));
  job.metadata.generation = 4;  // the spec changed: rebuild and compare
  EXPECT_FALSE(BuiltFrom(wl, job));
  job.metadata.generation = 3;
  job.metadata.labels[kPriorityClassLabel] = "high";  // labels move no generation
  EXPECT_FALSE(BuiltFrom(wl, job));
}

TEST(WorkloadTest, TheCacheKeepsNoTemplatesAndOnlyKueuesDecisionsQueueAPass) {
  json wl = BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, Priority{"high", 5});
  wl["status"] = {{"conditions", {{{"type", "QuotaReserved"}, {"status", "True"}}}}};
  const json cached = ProjectWorkload(wl);
  EXPECT_FALSE(cached["spec"].contains("podSets"));
  EXPECT_EQ(cached["spec"]["queueName"], "lq");
  EXPECT_EQ(cached["spec"]["priorityClassRef"]["name"], "high");
  EXPECT_EQ(cached["metadata"]["finalizers"], wl["metadata"]["finalizers"]);
  EXPECT_EQ(cached["status"], wl["status"]);

  json ready = cached;
  ready["status"]["conditions"].push_back({{"type", "PodsReady"}, {"status", "True"}});
  ready["status"]["reclaimablePods"] = {{{"name", "worker"}, {"count", 1}}};
  ready["metadata"]["resourceVersion"] = "9";
  EXPECT_FALSE(DecisionChanged(cached, ready)) << "the operator's own writes";
  json evicted = ready;
  evicted["status"]["conditions"].push_back({{"type", "Evicted"}, {"status", "True"}});
  EXPECT_TRUE(DecisionChanged(ready, evicted));
  json gone = cached;
  gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_TRUE(DecisionChanged(cached, gone));
}

// The job side's end, Finished as the operator writes it and the finalizer it then removes in
// the same pass, queues no pass of its own; Kueue finishing a Workload for its own reasons does.
TEST(WorkloadTest, TheOperatorsOwnFinishedAndFinalizerRemovalQueueNoPass) {
  json wl = ProjectWorkload(BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, std::nullopt));
  wl["status"] = {{"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}};
  for (const char* reason : {"Succeeded", "Failed"}) {
    json finished = wl;
    finished["status"]["conditions"].push_back(
        {{"type", "Finished"}, {"status", "True"}, {"reason", reason}});
    EXPECT_FALSE(DecisionChanged(wl, finished)) << reason;
    json released = finished;
    released["metadata"]["finalizers"] = nullptr;
    EXPECT_FALSE(DecisionChanged(finished, released)) << reason;
  }
  json replaced = wl;
  replaced["status"]["conditions"].push_back(
      {{"type", "Finished"}, {"status", "True"}, {"reason", "OutOfSync"}});
  EXPECT_TRUE(DecisionChanged(wl, replaced));
}

TEST(WorkloadTest, QueueNameIsTheLabelOrNothing) {
  EXPECT_EQ(QueueName(Job()), "lq");
  api::DistributedTraining plain = Job();
  plain.metadata.labels.clear();
  EXPECT_EQ(QueueName(plain), "");
}

}  // namespace
}  // namespace disttrain::queueing

namespace disttrain::queueing {
namespace {

// MultiKueue's copy of a job in a worker cluster: its Workload is prebuilt, to adopt.
TEST(PrebuiltWorkloadTest, TheLabelNamesTheWorkloadToAdopt) {
  api::DistributedTraining job = Job();
  EXPECT_EQ(PrebuiltWorkloadName(job), "");
  EXPECT_EQ(JobWorkloadName(job), WorkloadName(job));
  job.metadata.labels[kPrebuiltWorkloadLabel] = "job-dist-abcde";
  EXPECT_EQ(JobWorkloadName(job), "job-dist-abcde");
}

TEST(PrebuiltWorkloadTest, PodSetsThatDifferAreNamed) {
  const json wanted = BuildWorkload(Job(), {{"chief", 1, Pod("1")}, {"worker", 3, Pod("2")}}, {});
  json prebuilt = {{"metadata", {{"name", "pre"}}}, {"spec", wanted["spec"]}};
  EXPECT_EQ(PodSetsDiffer(prebuilt, wanted), "");
  prebuilt["spec"]["podSets"][1]["count"] = 4;
  EXPECT_EQ(PodSetsDiffer(prebuilt, wanted),
            "its podSets are [chief 1, worker 4], the job's [chief 1, worker 3]");
}

TEST(PrebuiltWorkloadTest, AdoptionMakesTheJobItsControllerAndKeepsOtherOwners) {
  const json wanted = BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, {});
  json prebuilt = {{"metadata",
                    {{"name", "pre"},
                     {"labels", {{"kueue.x-k8s.io/multikueue-origin", "manager"}}},
                     {"ownerReferences", {{{"kind", "ConfigMap"}, {"name", "x"}, {"uid", "u1"}}}}}},
                   {"spec", wanted["spec"]}};
  absl::StatusOr<json> patch = AdoptPatch(prebuilt, wanted);
  ASSERT_TRUE(patch.ok()) << patch.status();
  const json& meta = (*patch)["metadata"];
  ASSERT_EQ(meta["ownerReferences"].size(), 2u);
  EXPECT_EQ(meta["ownerReferences"][1]["uid"], "job-uid");
  EXPECT_TRUE(meta["ownerReferences"][1]["controller"].get<bool>());
  EXPECT_EQ(meta["labels"]["kueue.x-k8s.io/job-uid"], "job-uid");
  EXPECT_EQ(meta["labels"], wanted["metadata"]["labels"]);
  EXPECT_EQ(meta["finalizers"], json({kResourceInUseFinalizer}));
  EXPECT_TRUE(BuiltFrom(
      json{{"metadata", {{"annotations", meta["annotations"]}}}, {"spec", wanted["spec"]}}, Job()))
      << "once adopted it stands for this generation of the job";

  prebuilt["metadata"]["ownerReferences"][0]["controller"] = true;
  EXPECT_FALSE(AdoptPatch(prebuilt, wanted).ok()) << "another controller's Workload is not taken";
}

// MultiKueue can delete a worker's copy of a job and make it again while the copy's Workload
// stays (its removal failed and the manager's Workload got quota again first): the Workload
// still names the deleted copy, same kind and name, another UID. Kueue's own job controllers
// take it over (controllerutil.SetControllerReference matches owners by group, kind and name).
TEST(PrebuiltWorkloadTest, AdoptionTakesOverFromAnEarlierCopyOfTheSameJob) {
  const json wanted = BuildWorkload(Job(), {{"worker", 2, Pod("1")}}, {});
  json earlier = wanted["metadata"]["ownerReferences"][0];
  earlier["uid"] = "earlier-copy-uid";
  json prebuilt = {{"metadata", {{"name", "pre"}, {"ownerReferences", {earlier}}}},
                   {"spec", wanted["spec"]}};
  absl::StatusOr<json> patch = AdoptPatch(prebuilt, wanted);
  ASSERT_TRUE(patch.ok()) << patch.status();
  const json& owners = (*patch)["metadata"]["ownerReferences"];
  ASSERT_EQ(owners.size(), 1u) << owners.dump();
  EXPECT_EQ(owners[0]["uid"], "job-uid");

  for (const char* other : {"name", "kind", "apiVersion"}) {
    json stranger = earlier;
    stranger[other] = std::string(other) == "apiVersion" ? "other.io/v1" : "other";
    prebuilt["metadata"]["ownerReferences"] = {stranger};
    EXPECT_FALSE(AdoptPatch(prebuilt, wanted).ok()) << "a controller of another " << other;
  }
}

}  // namespace
}  // namespace disttrain::queueing
