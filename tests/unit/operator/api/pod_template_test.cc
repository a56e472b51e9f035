// CheckPodTemplate (pod_template.h): which templates are accepted, and the field a bad one names.
#include "operator/api/pod_template.h"

#include <string>

#include "gtest/gtest.h"

namespace disttrain::api {
namespace {

using nlohmann::json;

constexpr char kPath[] = "spec.replicaSpecs.Worker.template";

struct TemplateCase {
  std::string name;
  std::string pod_template;  // JSON
  std::string want_error;    // empty: accepted
};

class PodTemplateTest : public ::testing::TestWithParam<TemplateCase> {};

TEST_P(PodTemplateTest, AcceptsWhatAPodTemplateSpecAllowsAndNamesTheFirstFieldThatIsNot) {
  absl::Status s = CheckPodTemplate(json::parse(GetParam().pod_template), kPath);
  if (GetParam().want_error.empty()) {
    EXPECT_TRUE(s.ok()) << s;
  } else {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), GetParam().want_error);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PodTemplateTest,
    ::testing::Values(
        TemplateCase{"Minimal", R"({"spec": {"containers": [{"name": "t"}]}})", ""},
        TemplateCase{"EveryCheckedField", R"({
            "metadata": {"labels": {"team": "ml"}, "annotations": {"a": "b"}},
            "spec": {"restartPolicy": "Never", "priorityClassName": "high",
              "initContainers": [{"name": "init", "command": ["sh"]}],
              "containers": [{"name": "t", "image": "trainer:1", "command": ["python"],
                "args": ["--steps=1"],
                "env": [{"name": "A", "value": "b"}, {"name": "C", "valueFrom": {}}],
                "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "4"}}}]}})",
                     ""},
        TemplateCase{"NullIsUnset", R"({"metadata": null, "spec": {"restartPolicy": null,
            "containers": [{"name": "t", "image": null, "env": null, "resources": null}]}})",
                     ""},
        TemplateCase{"NoSpecIsLeftToValidation", R"({})", ""},
        TemplateCase{"NotAnObject", R"("pod")",
                     "spec.replicaSpecs.Worker.template: must be an object (a PodTemplateSpec)"},
        TemplateCase{"SpecNotAnObject", R"({"spec": []})",
                     "spec.replicaSpecs.Worker.template.spec: must be an object (a PodSpec)"},
        TemplateCase{"SecondContainerNameNumber",
                     R"({"spec": {"containers": [{"name": "a"}, {"name": 5}]}})",
                     "spec.replicaSpecs.Worker.template.spec.containers[1].name: must be a string"},
        TemplateCase{
            "PortZero",
            R"({"spec": {"containers": [{"name": "t", "ports": [{"containerPort": 0}]}]}})",
            "spec.replicaSpecs.Worker.template.spec.containers[0].ports[0].containerPort: "
            "must be an integer from 1 to 65535"},
        TemplateCase{"PortPastTheLast", R"({"spec": {"containers": [{"name": "t",
            "ports": [{"containerPort": 65536}]}]}})",
                     "spec.replicaSpecs.Worker.template.spec.containers[0].ports[0].containerPort: "
                     "must be an integer from 1 to 65535"},
        TemplateCase{"PortWithoutNumber",
                     R"({"spec": {"containers": [{"name": "t", "ports": [{"name": "p"}]}]}})",
                     "spec.replicaSpecs.Worker.template.spec.containers[0].ports[0].containerPort: "
                     "is required"},
        TemplateCase{"EnvNameMissing",
                     R"({"spec": {"containers": [{"name": "t", "env": [{"value": "b"}]}]}})",
                     "spec.replicaSpecs.Worker.template.spec.containers[0].env[0].name: "
                     "is required"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::api
