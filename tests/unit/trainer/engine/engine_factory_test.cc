// The engine --model names: dense models read Fashion-MNIST, recommendation models their schema;
// what is missing or wrong is named.
#include "trainer/engine/engine_factory.h"

#include "gtest/gtest.h"
#include "trainer/engine/dense_engine.h"
#include "trainer/engine/sparse_engine.h"

namespace disttrain::trainer {
namespace {

ClusterSpec Chief() {
  TfConfig c;
  c.cluster = {{"ps", {"127.0.0.1:1"}}, {"chief", {"127.0.0.1:2"}}};
  c.task_type = "chief";
  return *MakeClusterSpec(c);
}

TEST(EngineFactoryTest, TheModelPicksTheEngine) {
  TrainerOptions o;
  o.model = "toy";
  absl::StatusOr<std::unique_ptr<GradientEngine>> toy = MakeGradientEngine(o, Chief(), false);
  ASSERT_TRUE(toy.ok()) << toy.status();
  EXPECT_NE(dynamic_cast<DenseEngine*>(toy->get()), nullptr);
  EXPECT_FALSE((*toy)->needs_data());
  EXPECT_TRUE(IsSparseModel("deepfm"));
  EXPECT_FALSE(IsSparseModel("mlp"));
}

TEST(EngineFactoryTest, ARecommendationModelNeedsAReadableSchema) {
  TrainerOptions o;
  o.model = "widedeep";
  EXPECT_EQ(MakeGradientEngine(o, Chief(), false).status().message(),
            "--model widedeep needs --schema: the data's columns and tables");
  o.schema = "/nonexistent/schema.yaml";
  EXPECT_EQ(MakeGradientEngine(o, Chief(), false).status().message(),
            "cannot open the schema file /nonexistent/schema.yaml");
}

}  // namespace
}  // namespace disttrain::trainer
