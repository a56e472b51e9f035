#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "trainer/ps/parameter_server.h"
#include "trainer/ps/wire.h"
#include "trainer/roles.h"

namespace disttrain::trainer {

int RunParameterServer(const ClusterSpec& spec, const TrainerOptions& o,
                       const std::atomic<bool>& stop) {
  UpdateRuleOptions rule_options;
  rule_options.mode = o.mode;
  rule_options.learning_rate = static_cast<float>(o.learning_rate);
  rule_options.replicas_to_aggregate =
      o.replicas_to_aggregate > 0 ? static_cast<int>(o.replicas_to_aggregate) : spec.num_replicas();
  if (rule_options.replicas_to_aggregate > spec.num_replicas()) {
    LogError("--replicas-to-aggregate exceeds the training replicas",
             {{"replicas_to_aggregate", absl::StrCat(rule_options.replicas_to_aggregate)},
              {"replicas", absl::StrCat(spec.num_replicas())}});
    return kExitUsage;
  }
  if (absl::StatusOr<std::unique_ptr<UpdateRule>> rule = MakeUpdateRule(rule_options); !rule.ok()) {
    LogError(rule.status().message());
    return kExitUsage;
  }
  ParameterServer service([&rule_options] { return *MakeUpdateRule(rule_options); },
                          static_cast<int>(o.ps_push_buffers), static_cast<int>(o.ps_connections));
  const std::string port = spec.own_address.substr(spec.own_address.rfind(':') + 1);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(absl::StrCat("0.0.0.0:", port), grpc::InsecureServerCredentials(),
                           &bound);
  builder.SetMaxReceiveMessageSize(8 << 20);  // chunks are 512 KiB: a deliberate, bounded limit
  wire::SetTransportArgs(&builder);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound == 0) {
    LogError("cannot listen", {{"address", spec.own_address}});
    return kExitTransient;
  }
  LogInfo("parameter server listening",
          {{"task", spec.TaskName()},
           {"port", port},
           {"mode", o.mode},
           {"replicas_to_aggregate", absl::StrCat(rule_options.replicas_to_aggregate)},
           {"partitions", absl::StrCat(o.ps_connections)}});
  while (!stop) absl::SleepFor(absl::Milliseconds(50));
  service.Close();  // waiting pulls answer now instead of holding the shutdown
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  LogInfo("parameter server stopped on SIGTERM", {{"task", spec.TaskName()}});
  return kExitOk;
}

}  // namespace disttrain::trainer
