#include "operator/kube/resource.h"

#include "gtest/gtest.h"

namespace disttrain::kube {
namespace {

TEST(ResourceTest, BuildsApiPaths) {
  EXPECT_EQ(kPods.Path("ns", "p", "status"), "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(kPods.Path(""), "/api/v1/pods");
  EXPECT_EQ(kDistributedTrainings.Path("ml", "dist"),
            "/apis/disttrain.io/v1/namespaces/ml/distributedtrainings/dist");
  EXPECT_EQ(kNamespaces.Path("ignored", "x"), "/api/v1/namespaces/x");
}

}  // namespace
}  // namespace disttrain::kube
