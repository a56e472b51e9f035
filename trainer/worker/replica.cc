// The training loop of the chief and the workers (see roles.h).
#include "trainer/worker/internal/replica.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"
#include "trainer/engine/dense_engine.h"
#include "trainer/engine/engine_factory.h"
#include "trainer/events.h"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/kernels/parallel_for.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/roles.h"
#include "trainer/summary/event_writer.h"
#include "trainer/termination_message.h"
#include "trainer/wire/wire.h"
#include "trainer/worker/gpu_placement.h"
#include "trainer/worker/ps_client.h"
#include "trainer/worker/schemes/worker_scheme.h"
#include "trainer/worker/step_tracker.h"

namespace disttrain::trainer {
namespace internal {

Replica::Replica(const ClusterSpec& spec, const TrainerOptions& o,
                 std::unique_ptr<GradientEngine> engine, SchemeConfig scheme, const Clock* clock)
    : spec_(spec),
      o_(o),
      clock_(clock),
      engine_(std::move(engine)),
      chief_(spec.role == Role::kChief),
      sync_(IsSynchronous(scheme.scheme)),
      scheme_(MakeWorkerScheme(scheme, spec.replica_rank)),
      variables_(engine_->Variables()),
      client_(spec.ps, variables_, spec.TaskName(), static_cast<int>(o.ps_connections)) {
  std::unique_ptr<EventWriter> summaries;
  if (chief_) {
    absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Open(SummaryDir(o, "train"));
    if (w.ok()) {
      summaries = *std::move(w);
    } else {
      LogWarning("cannot write TensorBoard summaries", {{"error", w.status().ToString()}});
    }
  }
  StepReporter::Config report;
  report.task = spec.TaskName();
  report.batch_size = o.batch_size;
  report.batches_per_commit =
      static_cast<int64_t>(scheme_->local_steps()) * engine_->batches_per_gradient();
  report.log_every = o.log_every;
  report.sync = sync_;
  report.replicas_to_aggregate = o.replicas_to_aggregate;
  report.tf_config_replicas = spec.num_replicas();
  report.target_steps = o.steps;
  reporter_ =
      std::make_unique<StepReporter>(std::move(report), &Metrics(), std::move(summaries), clock_);
  // Embedding rows are copied only when asked: the copy then takes the tables' size.
  const std::vector<std::string> tables = engine_->ServerTableNames();
  if (chief_ && o.ps_copy_seconds > 0 && (tables.empty() || o.ps_copy_tables)) {
    // Its own name: a pull alone joins nothing (trainer/ps/membership.h), and it must not keep a
    // silent chief counted live.
    copy_client_ = std::make_unique<PsClient>(spec.ps, variables_, spec.TaskName() + "-copy",
                                              static_cast<int>(o.ps_connections));
    PsCopy::ExportRows export_rows;
    if (!tables.empty()) {
      // Connections of its own, and its own export versions (the checkpoints' are the engine's).
      copy_rows_client_ = std::make_unique<SparseClient>(spec.ps, spec.TaskName() + "-copy");
      export_rows = [client = copy_rows_client_.get(), tables](PsCopy::RowSink sink) {
        for (const std::string& table : tables) {
          absl::Status s = client->Export(table, /*full=*/false, sink, /*complete=*/nullptr,
                                          /*deadline_seconds=*/60);
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
      };
    }
    copy_ = std::make_unique<PsCopy>(
        [client = copy_client_.get()](Params* params) { return client->PullAll(params); },
        absl::Seconds(o.ps_copy_seconds), clock_, std::move(export_rows));
  }
}

bool Replica::Tolerate(const absl::Status& s) {
  const absl::Time now = clock_->Now();
  if (failing_since_ == absl::InfiniteFuture()) {
    failing_since_ = now;
    LogWarning("lost a parameter server; retrying",
               {{"task", spec_.TaskName()}, {"error", s.ToString()}});
  }
  if (now - failing_since_ > absl::Seconds(o_.retry_seconds)) {
    LogError("parameter servers unreachable past the retry budget",
             {{"task", spec_.TaskName()},
              {"retry_seconds", absl::StrCat(o_.retry_seconds)},
              {"error", s.ToString()}});
    return false;
  }
  absl::SleepFor(absl::Milliseconds(200));
  return true;
}

absl::Status Replica::InitializeOrRestore() {
  std::vector<std::string> skipped;
  absl::StatusOr<Checkpoint> ckpt = LatestCheckpoint(o_.model_dir, &skipped);
  for (const std::string& s : skipped) LogWarning("skipping a corrupt checkpoint", {{"error", s}});
  // A server restarted while the chief ran: its copy is newer than any checkpoint.
  if (std::optional<PsCopy::Copy> copy = copy_ != nullptr ? copy_->Latest() : std::nullopt;
      copy.has_value() && (!ckpt.ok() || copy->global_step > ckpt->global_step)) {
    // The embedding rows first, as from a checkpoint: the dense variables' Init ends a restore.
    if (absl::Status s =
            engine_->PrepareServersFromCopy([&](TableRowsFn fn) { return copy_->ReadTables(fn); });
        !s.ok())
      return s;
    if (absl::Status s = client_.InitAll(copy->params, copy->global_step); !s.ok()) return s;
    const double age = absl::ToDoubleSeconds(clock_->Now() - copy->taken);
    LogInfo("restored the parameter servers from the chief's copy",
            {{"global_step", absl::StrCat(copy->global_step)},
             {"checkpoint_step", ckpt.ok() ? absl::StrCat(ckpt->global_step) : "none"},
             {"copy_age_seconds", absl::StrCat(age)},
             {"table_rows", absl::StrCat(copy->table_rows)}});
    EmitEvent({{"event", "restore"},
               {"task", spec_.TaskName()},
               {"global_step", copy->global_step},
               {"source", "copy"},
               {"copy_age_seconds", age},
               {"table_rows", copy->table_rows}});
    return absl::OkStatus();
  }
  if (ckpt.ok()) {
    if (!SameVariables(ckpt->variables, variables_)) {
      usage_error_ = true;
      return absl::FailedPreconditionError(
          absl::StrCat(ckpt->path, " holds another model's variables"));
    }
    if (absl::Status s = engine_->PrepareServers(o_.model_dir, ckpt->global_step); !s.ok()) {
      if (s.code() == absl::StatusCode::kDataLoss) usage_error_ = true;
      return s;
    }
    if (absl::Status s = client_.InitAll(ckpt->values, ckpt->global_step); !s.ok()) return s;
    last_checkpoint_ = ckpt->global_step;
    LogInfo("restored the parameter servers from a checkpoint",
            {{"path", ckpt->path}, {"global_step", absl::StrCat(ckpt->global_step)}});
    EmitEvent({{"event", "restore"},
               {"task", spec_.TaskName()},
               {"global_step", ckpt->global_step},
               {"source", "checkpoint"}});
    return absl::OkStatus();
  }
  if (absl::Status s = engine_->PrepareServers(o_.model_dir, std::nullopt); !s.ok()) return s;
  if (absl::Status s = client_.InitAll(engine_->Initialize(static_cast<uint64_t>(o_.seed)), 0);
      !s.ok())
    return s;
  LogInfo("initialised the parameter servers",
          {{"seed", absl::StrCat(o_.seed)}, {"ps", absl::StrCat(spec_.ps.size())}});
  return absl::OkStatus();
}

// Stopped before the end (evicted or preempted by Kueue, suspended, deleted): what the servers
// hold now is saved, so the job resumes from here rather than from its last periodic checkpoint.
// Best effort, within the pod's grace period: the operator stops the chief before the parameter
// servers, so they still answer.
void Replica::CheckpointBeforeStopping() {
  Params params;
  absl::StatusOr<int64_t> pulled = client_.PullAll(&params);
  if (!pulled.ok()) {
    LogWarning("no checkpoint on SIGTERM: the parameter servers did not answer",
               {{"error", pulled.status().ToString()}});
    return;
  }
  if (*pulled > last_checkpoint_) SaveCheckpoint(*pulled, params);
}

void Replica::SaveCheckpoint(int64_t step, const Params& params, bool final) {
  absl::Status written = WriteCheckpoint(o_.model_dir, step, variables_, params,
                                         static_cast<int>(o_.keep_checkpoints));
  // What else the servers hold (embedding tables) goes beside the dense variables; without it
  // the checkpoint cannot be restored, so its failure is the checkpoint's.
  if (written.ok())
    written = engine_->SaveCheckpoint(o_.model_dir, step, static_cast<int>(o_.keep_checkpoints));
  if (!written.ok()) LogWarning("checkpoint failed", {{"error", written.ToString()}});
  absl::Status published = absl::OkStatus();
  if (o_.eval_source == "ps") {  // the evaluator reads checkpoints from ps 0, not from the disk
    if (snapshot_stub_ == nullptr) {
      snapshot_stub_ = v1::ParameterServer::NewStub(wire::NewChannel(spec_.ps[0]));
    }
    published = PublishSnapshot(snapshot_stub_.get(), {step, variables_, params, "", final});
    if (!published.ok())
      LogWarning("cannot publish the checkpoint to ps 0", {{"error", published.ToString()}});
  }
  if (!written.ok() && !published.ok()) return;
  last_checkpoint_ = step;
  Metrics().checkpoint_step->Set({}, static_cast<double>(step));
  Metrics().last_checkpoint_unix = absl::ToUnixMicros(clock_->Now()) / 1e6;
  LogInfo("saved a checkpoint", {{"global_step", absl::StrCat(step)}, {"dir", o_.model_dir}});
  EmitEvent({{"event", "checkpoint"}, {"global_step", step}});
}

// Waits until every server holds the variables (the chief initialises or restores them).
// False when the replica must exit (`*exit_code`).
bool Replica::AwaitInitialized(int* exit_code) {
  absl::StatusOr<std::vector<PsState>> states = client_.DescribeAll();
  if (states.status().code() ==
      absl::StatusCode::kInvalidArgument) {  // e.g. --ps-connections differ
    LogError("the parameter servers are configured differently from this task",
             {{"task", spec_.TaskName()}, {"error", states.status().ToString()}});
    *exit_code = kExitUsage;
    return false;
  }
  if (!states.ok()) {
    if (!Tolerate(states.status())) *exit_code = kExitTransient;
    return false;
  }
  Recovered();
  if (std::all_of(states->begin(), states->end(), [](const PsState& s) { return s.initialized; }))
    return true;
  if (!chief_) {
    absl::SleepFor(absl::Milliseconds(100));
    return false;
  }
  absl::Status s = InitializeOrRestore();
  if (usage_error_) {
    LogError(s.message());
    *exit_code = kExitUsage;
  } else if (!s.ok() && !Tolerate(s)) {
    *exit_code = kExitTransient;
  }
  return false;
}

void Replica::Recovered() {
  if (failing_since_ == absl::InfiniteFuture()) return;
  LogInfo("parameter servers are back", {{"task", spec_.TaskName()}});
  failing_since_ = absl::InfiniteFuture();
}

int Replica::Run(const std::atomic<bool>& stop) {
  Params params;
  // Shared with gRPC, which may hold a gradient past a failed push (PsClient::PushPull).
  auto grads = std::make_shared<Params>();
  bool ready = false;  // every server was seen initialised
  StepTracker tracker(sync_);
  while (!stop) {
    if (!ready) {
      int exit_code = -1;
      ready = AwaitInitialized(&exit_code);
      if (exit_code >= 0) return exit_code;
      if (ready && copy_ != nullptr && !copy_started_) {  // once the servers hold the variables
        copy_->Start();
        copy_started_ = true;
        LogInfo("keeping a copy of the parameter servers",
                {{"every_seconds", absl::StrCat(o_.ps_copy_seconds)}});
      }
      tracker.Reconnected();
      continue;
    }
    // One call per server per step: push the last gradient (if any), pull the variables.
    const StepTracker::Call call = tracker.Begin();
    PsClient::StepOptions step_options;
    step_options.step = call.step;
    step_options.min_step = call.min_step;
    step_options.wait = absl::Seconds(2);
    // Pulling while the push still arrives saves a round trip but may miss this push. Schemes that
    // commit several local steps at once wait for it, or their next window would start from
    // variables without their own last commit and repeat it.
    step_options.pull_early = !sync_ && scheme_->local_steps() == 1;
    const absl::Time exchange_start = clock_->Now();
    absl::StatusOr<PsClient::StepResult> r =
        call.push ? client_.PushPull(std::shared_ptr<const Params>(grads), step_options, &params)
                  : client_.PushPull(nullptr, step_options, &params);
    if (train_start_ != absl::InfiniteFuture()) exchange_time_ += clock_->Now() - exchange_start;
    if (!r.ok()) {
      // gRPC may still read the failed push's gradient (PsClient::PushPull): the next round
      // writes into a copy, which nothing else holds.
      if (call.push) grads = std::make_shared<Params>(*grads);
      ready = false;
      if (r.status().code() != absl::StatusCode::kFailedPrecondition && !Tolerate(r.status()))
        return kExitTransient;
      continue;
    }
    Recovered();
    if (r->live_replicas > 0) {
      reporter_->SetLiveReplicas(r->live_replicas);
      scheme_->SetLiveReplicas(r->live_replicas);
    }
    const StepTracker::Verdict verdict = tracker.Reply(r->global_step, r->dropped, r->incarnations);
    if (verdict.restarted)
      LogInfo("a parameter server restarted; resuming at its step",
              {{"task", spec_.TaskName()}, {"global_step", absl::StrCat(r->global_step)}});
    if (verdict.new_incarnations) {
      scheme_->Reset();
      engine_->Reset();
    }
    if (!verdict.train) continue;  // the step's aggregate is not applied yet
    const int64_t step = verdict.step;
    if (step >= o_.steps) {
      train_end_ = clock_->Now();
      break;
    }
    if (chief_ && step % o_.checkpoint_steps == 0 && step > last_checkpoint_)
      SaveCheckpoint(step, params);

    if (train_start_ == absl::InfiniteFuture()) train_start_ = clock_->Now();
    const absl::Time round_start = clock_->Now();
    const float loss = scheme_->Round(
        params, [this](const Params& at, Params* g) { return engine_->Gradient(at, g); },
        grads.get());
    round_time_ += clock_->Now() - round_start;
    // An engine that exchanges with the servers itself (embedding rows) failed during the round:
    // the round is dropped, as a failed exchange would be; bad data ends the run.
    if (absl::Status s = engine_->TakeError(); !s.ok()) {
      if (s.code() == absl::StatusCode::kInvalidArgument ||
          s.code() == absl::StatusCode::kDataLoss || s.code() == absl::StatusCode::kNotFound) {
        LogError("cannot train on the data", {{"task", spec_.TaskName()}, {"error", s.ToString()}});
        return kExitUsage;
      }
      ready = false;
      if (s.code() != absl::StatusCode::kFailedPrecondition && !Tolerate(s)) return kExitTransient;
      continue;
    }
    reporter_->Record(step, loss);
    tracker.Computed(step);
  }
  if (stop) {
    LogInfo("stopping on SIGTERM", {{"task", spec_.TaskName()}});
    // Scaled down (or the job stops): synchronous servers stop waiting for this replica's
    // gradients now rather than after --replica-timeout-seconds of silence.
    if (ready) {
      if (absl::Status s = client_.LeaveAll(absl::Seconds(2)); !s.ok())
        LogWarning("could not tell every parameter server this replica leaves",
                   {{"error", s.ToString()}});
    }
    if (chief_) CheckpointBeforeStopping();
    return 143;  // 128 + SIGTERM, as a process killed by it reports
  }
  return chief_ ? Finish() : kExitOk;
}

int Replica::Finish() {
  // The last batch's row gradients are part of the trained model.
  if (absl::Status s = engine_->Flush(); !s.ok())
    LogWarning("cannot send the last row gradients", {{"error", s.ToString()}});
  Params params;
  absl::StatusOr<int64_t> pulled = client_.PullAll(&params);
  if (!pulled.ok()) {
    LogError("cannot read the final variables", {{"error", pulled.status().ToString()}});
    return kExitTransient;
  }
  // Always, even when a restored checkpoint is at this step already: a restarted ps 0 may not
  // hold it, and the evaluator needs the final snapshot marked as final.
  SaveCheckpoint(*pulled, params, /*final=*/true);
  const EvalResult r = engine_->Evaluate(params);
  nlohmann::json done = {
      {"event", "done"}, {"task", spec_.TaskName()}, {"global_step", *pulled}, {"loss", r.loss}};
  // From the chief's first step to its last: global steps / train_seconds is the job's step rate.
  if (train_start_ != absl::InfiniteFuture() && train_end_ != absl::InfiniteFuture()) {
    // Not the final checkpoint and evaluation below: with a big model and few steps they were a
    // third of it (2048,2048 at batch 16384, 40 steps: 25 of 79 ms per step on an H100).
    done["train_seconds"] = absl::ToDoubleSeconds(train_end_ - train_start_);
    // This replica's share: exchange (push, the wait for the step, pull) and the gradient rounds.
    done["exchange_seconds"] = absl::ToDoubleSeconds(exchange_time_);
    done["round_seconds"] = absl::ToDoubleSeconds(round_time_);
  }
  nlohmann::json result = {{"globalStep", *pulled}, {"loss", r.loss}};
  if (r.auc.has_value()) {
    done["train_auc"] = *r.auc;
    result["trainAuc"] = *r.auc;
  } else if (engine_->needs_data()) {
    done["train_accuracy"] = r.accuracy;
    result["trainAccuracy"] = r.accuracy;
  }
  if (!engine_->needs_data()) done["variables"] = params;
  EmitEvent(done);
  if (done.contains("train_seconds")) result["trainSeconds"] = done["train_seconds"];
  WriteTerminationMessage(o_.termination_message_path, result);
  LogInfo("training finished",
          {{"global_step", absl::StrCat(*pulled)}, {"loss", absl::StrCat(r.loss)}});
  return kExitOk;
}

}  // namespace internal

namespace {

// --device cuda: the GPUs this process may use, or why none (a usage error: the pod or the
// environment gives it no GPU, or the binary has no CUDA kernels).
absl::StatusOr<int> CudaDevices() {
  const VisibleGpus visible = VisibleGpusFromEnvironment();
  if (visible.kind == VisibleGpus::Kind::kNone)
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device (GPU) is visible: ", visible.reason));
  if (!kernels::CudaAvailable()) {
    absl::Status why = kernels::CudaUseDevice(0);  // names what is missing: kernels or device
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA device (GPU) is visible: ",
                     why.ok() ? "the driver enumerates none" : why.message(),
                     " (does the pod request nvidia.com/gpu, on a node with NVIDIA's device "
                     "plugin?)"));
  }
  return kernels::CudaDeviceCount();
}

}  // namespace

int RunReplica(const ClusterSpec& spec, const TrainerOptions& o, const std::atomic<bool>& stop,
               const Clock* clock) {
  absl::StatusOr<SchemeConfig> scheme = MakeSchemeConfig(o, spec.num_replicas());
  if (!scheme.ok()) {
    LogError("invalid training scheme", {{"error", scheme.status().ToString()}});
    return kExitUsage;
  }
  int devices = 0;
  if (o.device == "cuda") {
    absl::StatusOr<int> d = CudaDevices();
    if (!d.ok()) {
      LogError("--device cuda", {{"error", d.status().ToString()}});
      return kExitUsage;
    }
    devices = *d;
  }
  TrainerOptions resolved = o;  // --local-replicas 0: a tower per GPU, or one on the CPU
  if (resolved.local_replicas == 0) resolved.local_replicas = std::max(devices, 1);
  absl::StatusOr<std::unique_ptr<GradientEngine>> engine =
      MakeGradientEngine(resolved, spec, /*evaluate=*/false);
  if (!engine.ok()) {
    LogError("cannot set up training", {{"error", engine.status().ToString()}});
    return kExitUsage;
  }
  if (devices > 0) {
    if (absl::Status s = static_cast<DenseEngine&>(**engine).UseCuda(devices, spec.TaskName());
        !s.ok()) {
      LogError("--device cuda", {{"error", s.ToString()}});
      return kExitUsage;
    }
  }
  internal::Replica replica(spec, resolved, *std::move(engine), *std::move(scheme), clock);
  return replica.Run(stop);
}

}  // namespace disttrain::trainer
