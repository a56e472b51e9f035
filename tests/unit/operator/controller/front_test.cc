// Front (front.h): what each API front watches, as the operator's settings ask.
#include "operator/controller/front.h"

#include <string>
#include <vector>

#include "common/clock.h"
#include "gtest/gtest.h"
#include "operator/kube/resource.h"
#include "tests/unit/operator/controller/reconciler_harness.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::controller {
namespace {

// "resource selector" of each informer, in order.
std::vector<std::string> Watches(const Front& front) {
  std::vector<std::string> out;
  for (const runtime::Informer* i : front.informers()) {
    out.push_back(i->options().resource.plural + " " + i->options().label_selector);
  }
  return out;
}

class FrontTest : public ::testing::Test {
 protected:
  disttrain::testing::FakeKubeClient client_;
  FakeClock clock_;
  MetricsRegistry metrics_;
  testing::RecordingEvents events_;
  FrontDeps deps_{&client_, &clock_, &metrics_, &events_};
  runtime::Informer flavors_{&client_, {.resource = kube::kResourceFlavors}};
};

TEST_F(FrontTest, EachFrontWatchesItsJobsAndTheChildrenItsLabelsSelect) {
  FrontSettings s;
  s.namespace_name = "team";
  const Front dt(deps_, DistributedTrainingApi(), s);
  EXPECT_EQ(Watches(dt),
            (std::vector<std::string>{"distributedtrainings ",
                                      "pods app.kubernetes.io/managed-by=disttrain-operator",
                                      "services app.kubernetes.io/managed-by=disttrain-operator"}));
  for (const runtime::Informer* i : dt.informers()) EXPECT_EQ(i->options().namespace_name, "team");
  const Front tf(deps_, TfJobApi(), s);
  EXPECT_EQ(Watches(tf), (std::vector<std::string>{
                             "tfjobs ", "pods training.kubeflow.org/operator-name=tfjob-controller",
                             "services training.kubeflow.org/operator-name=tfjob-controller"}));
}

TEST_F(FrontTest, WithKueueEachFrontWatchesItsOwnWorkloads) {
  FrontSettings s;
  s.flavors = &flavors_;
  const Front dt(deps_, DistributedTrainingApi(), s);
  const Front tf(deps_, TfJobApi(), s);
  ASSERT_EQ(Watches(dt).size(), 4u);
  EXPECT_EQ(Watches(dt)[3],
            "workloads app.kubernetes.io/managed-by=disttrain-operator,"
            "disttrain.io/job-kind!=TFJob");
  ASSERT_EQ(Watches(tf).size(), 4u);
  EXPECT_EQ(Watches(tf)[3],
            "workloads app.kubernetes.io/managed-by=disttrain-operator,"
            "disttrain.io/job-kind=TFJob");
}

TEST_F(FrontTest, KueueQueueingTfJobsLeavesTheTfJobFrontWithoutWorkloads) {
  FrontSettings s;
  s.flavors = &flavors_;
  s.kueue_queues_tfjobs = true;
  EXPECT_EQ(Watches(Front(deps_, TfJobApi(), s)).size(), 3u);
  EXPECT_EQ(Watches(Front(deps_, DistributedTrainingApi(), s)).size(), 4u)
      << "DistributedTrainings still get their Workloads from the operator";
}

TEST_F(FrontTest, ANamespaceSelectorNarrowsTheTfJobFrontOnly) {
  FrontSettings s;
  s.tfjob_namespace_selector = "disttrain.io/tfjob=enabled";
  const std::vector<std::string> tf = Watches(Front(deps_, TfJobApi(), s));
  ASSERT_EQ(tf.size(), 4u);
  EXPECT_EQ(tf[3], "namespaces disttrain.io/tfjob=enabled");
  EXPECT_EQ(Watches(Front(deps_, DistributedTrainingApi(), s)).size(), 3u);
}

}  // namespace
}  // namespace disttrain::controller
