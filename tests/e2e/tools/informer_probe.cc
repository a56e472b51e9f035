// Test tool: runs one Informer and prints every event it delivers as a JSON line
// {"event":"add|update|delete","name":...,"uid":...,"resourceVersion":...,"unix_us":...}, plus
// {"event":"synced","objects":N,"rss_kb":...} once the first list is in and a
// {"event":"stats",...} line on each SIGUSR1-free poll of stdin ("stats\n").
//
//   informer_probe --kubeconfig K --resource pods --namespace NS --selector SEL
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "operator/kube/config.h"
#include "operator/kube/rest_kube_client.h"
#include "operator/policy/pod_projection.h"
#include "operator/runtime/informer.h"

namespace {

using namespace disttrain;  // NOLINT

absl::Mutex out_mu;

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

void Print(const std::string& event, const runtime::ObjectPtr& o) {
  nlohmann::json line = {
      {"event", event},
      {"name", o->value("/metadata/name"_json_pointer, "")},
      {"uid", o->value("/metadata/uid"_json_pointer, "")},
      {"resourceVersion", o->value("/metadata/resourceVersion"_json_pointer, "")},
      {"unix_us", absl::ToUnixMicros(absl::Now())}};
  absl::MutexLock lock(&out_mu);
  std::cout << line.dump() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig, resource = "pods", ns, selector;
  FlagSet flags(
      "informer_probe --kubeconfig K [--resource pods|services] [--namespace NS] [--selector S]");
  flags.String("kubeconfig", &kubeconfig, "kubeconfig");
  flags.String("resource", &resource, "pods or services");
  flags.String("namespace", &ns, "namespace (empty: all)");
  flags.String("selector", &selector, "label selector");
  auto rest = flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!rest.ok()) {
    std::cerr << rest.status().message() << "\n";
    return 2;
  }
  auto config = kube::LoadKubeconfig(kubeconfig, "");
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 2;
  }
  auto client = kube::RestKubeClient::Create(*config);
  if (!client.ok()) {
    std::cerr << client.status().message() << "\n";
    return 2;
  }
  runtime::InformerOptions options{
      .resource = resource == "services" ? kube::kServices : kube::kPods,
      .namespace_name = ns,
      .label_selector = selector};
  // As the operator caches them: decoded from protobuf, or projected from JSON.
  if (resource == "pods") {
    options.transform = policy::ProjectPod;
    options.decode_protobuf = policy::DecodePodProjection;
  } else {
    options.transform = policy::ProjectService;
    options.decode_protobuf = policy::DecodeServiceProjection;
  }
  runtime::Informer informer((*client).get(), options);
  informer.AddHandler(
      {[](const runtime::ObjectPtr& o) { Print("add", o); },
       [](const runtime::ObjectPtr&, const runtime::ObjectPtr& n) { Print("update", n); },
       [](const runtime::ObjectPtr& o) { Print("delete", o); }});
  informer.Start();
  informer.WaitForSync(absl::Minutes(5));
  {
    absl::MutexLock lock(&out_mu);
    std::cout << nlohmann::json{{"event", "synced"},
                                {"objects", informer.store().Size()},
                                {"rss_kb", RssKb()}}
                     .dump()
              << std::endl;
  }
  std::string cmd;
  while (std::getline(std::cin, cmd)) {  // "stats" asks for a line; EOF ends the probe
    absl::MutexLock lock(&out_mu);
    std::cout << nlohmann::json{{"event", "stats"},
                                {"objects", informer.store().Size()},
                                {"rss_kb", RssKb()},
                                {"lists", informer.list_count()}}
                     .dump()
              << std::endl;
  }
  informer.Stop();
  return 0;
}
