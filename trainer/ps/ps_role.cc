#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/ps/parameter_server.h"
#include "trainer/roles.h"
#include "trainer/wire/transport_security.h"
#include "trainer/wire/wire.h"

namespace disttrain::trainer {

int RunParameterServer(const ClusterSpec& spec, const TrainerOptions& o,
                       const std::atomic<bool>& stop) {
  absl::StatusOr<SchemeConfig> scheme = MakeSchemeConfig(o, spec.num_replicas());
  if (!scheme.ok()) {
    LogError("invalid training scheme", {{"error", scheme.status().ToString()}});
    return kExitUsage;
  }
  const SchemeConfig config = *scheme;
  ParameterServer service([&config] { return MakeUpdateRule(config); },
                          static_cast<int>(o.ps_push_buffers), static_cast<int>(o.ps_connections));
  service.HoldIdsOf(spec.task_index, static_cast<int>(spec.ps.size()));
  Metrics().SetBeforeScrape([&service] {
    TrainerMetrics& m = Metrics();
    for (const auto& t : service.embeddings().tables()) {
      const embedding::EmbeddingTable::Stats st = t->stats();
      const LabelValues table = {t->config().name};
      m.ps_table_rows->Set(table, static_cast<double>(st.rows));
      m.ps_table_memory_bytes->Set(table, static_cast<double>(st.memory_bytes));
      m.ps_table_rows_created->Set(table, static_cast<double>(st.created));
      m.ps_table_evictions->Set(table, static_cast<double>(st.evicted));
      m.ps_table_not_admitted->Set(table, static_cast<double>(st.not_admitted));
      m.ps_table_rows_pulled->Set(table, static_cast<double>(st.pulled));
      m.ps_table_rows_updated->Set(table, static_cast<double>(st.updated));
    }
  });
  service.FollowReplicas(spec.ReplicaNames(), o.replica_timeout_seconds > 0
                                                  ? absl::Seconds(o.replica_timeout_seconds)
                                                  : absl::InfiniteDuration());
  const std::string port = spec.own_address.substr(spec.own_address.rfind(':') + 1);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(absl::StrCat("0.0.0.0:", port), ServerCredentials(), &bound);
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
           {"mode", SchemeName(config.scheme)},
           {"replicas_to_aggregate", absl::StrCat(config.replicas_to_aggregate)},
           {"partitions", absl::StrCat(o.ps_connections)}});
  while (!stop) absl::SleepFor(absl::Milliseconds(50));
  const absl::Time final_deadline = absl::Now() + absl::Seconds(o.final_snapshot_seconds);
  // The final evaluation outlives training: ps 0 holds the chief's last checkpoint until the
  // evaluator (listed in TF_CONFIG, or seen asking) has it, or the bound passes.
  if (spec.task_index == 0 && (spec.has_evaluator_task || service.snapshots().asked())) {
    const absl::Time since = absl::Now();
    switch (service.snapshots().AwaitFinalDelivered(final_deadline)) {
      case SnapshotSlot::FinalState::kNone:
        break;
      case SnapshotSlot::FinalState::kDelivered:
        LogInfo("the evaluator has the final checkpoint; stopping",
                {{"waited_ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - since))}});
        break;
      case SnapshotSlot::FinalState::kNotFetched:
        LogWarning("the evaluator did not fetch the final checkpoint in time; stopping",
                   {{"final_snapshot_seconds", absl::StrCat(o.final_snapshot_seconds)}});
        break;
    }
  }
  // An evaluator of a model with embedding tables reads rows from every server for its final
  // evaluation: they wait for it to say it is done, within the same bound.
  if (spec.has_evaluator_task && !service.embeddings().tables().empty()) {
    if (!service.AwaitEvaluatorDone(final_deadline))
      LogWarning("the evaluator did not finish its lookups in time; stopping",
                 {{"final_snapshot_seconds", absl::StrCat(o.final_snapshot_seconds)}});
  }
  Metrics().SetBeforeScrape(nullptr);
  service.Close();  // waiting pulls answer now instead of holding the shutdown
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  LogInfo("parameter server stopped on SIGTERM", {{"task", spec.TaskName()}});
  return kExitOk;
}

}  // namespace disttrain::trainer
