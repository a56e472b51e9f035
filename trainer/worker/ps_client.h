// The training replicas' client of every parameter server. A training step is one PushPull per
// server, all servers at once (push_pull_call.h): the gradient goes out and the variables come
// back in the same call, assembled into whole variables by the shard plan. A server's
// incarnation comes back with every reply, so a restarted server is noticed without a
// Describe per step. Thread-compatible: one replica's loop uses it from one thread.
#ifndef DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_
#define DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_

#include <grpcpp/generic/generic_stub.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "disttrain/trainer/v1/parameter_server.grpc.pb.h"
#include "trainer/models/model.h"
#include "trainer/wire/shard_plan.h"

namespace disttrain::trainer {

struct PsState {
  bool initialized = false;
  int64_t global_step = 0;
  std::string incarnation;
};

// How many of a server's `partitions` (--ps-connections) a share of `share_bytes` is spread
// over, each with its own connection: one below two whole 512 KiB chunks (one call per server
// per step); otherwise one per 32 MiB, at least two and at most all. Measured
// (docs/notes/trainer-data-path.md): the 318 KB MLP trained 35k examples/s over one connection, 27k
// over two; a 1 MiB model's push+pull moved 1.41-1.70 GB/s over two against 1.12-1.49 over one; 256
// MiB 3.62-4.08 over four against 2.94-3.29 over two, while at 64 MiB four held a server serving 4
// workers at 2.64-2.68x the model's size in memory against 2.47x with two.
int PartitionsUsed(size_t share_bytes, int partitions);

class PsClient {
 public:
  // `connections_per_ps`: the servers' partitions (--ps-connections); the variables are sharded
  // over servers x the partitions PartitionsUsed() picks, each over its own connection (the
  // others stay empty).
  PsClient(const std::vector<std::string>& addresses, std::vector<VariableSpec> variables,
           std::string worker_name, int connections_per_ps = 1);

  int num_ps() const { return static_cast<int>(addresses_.size()); }
  // One state per server; InvalidArgument when a server's partitions differ from ours.
  absl::StatusOr<std::vector<PsState>> DescribeAll();
  // Writes `params` (whole variables) into every server at `global_step`.
  absl::Status InitAll(const Params& params, int64_t global_step);
  struct StepResult {
    int64_t global_step = 0;                // of the pulled values (server 0's)
    bool dropped = false;                   // server 0 dropped the push as stale (synchronous mode)
    std::vector<std::string> incarnations;  // by server and partition
    int live_replicas = 0;                  // server 0's count (0: it does not count)
  };
  struct StepOptions {
    int64_t step = 0;      // the step `grads` was computed at
    int64_t min_step = 0;  // the pull first waits (up to `wait`) for the servers to reach it
    absl::Duration wait = absl::ZeroDuration();
    bool pull_early = false;  // asynchronous: pull while pushing (see the proto)
  };
  // Sends `grads` (null: pull only), then reads every variable into `params`. gRPC may hold the
  // gradient's memory a little past the calls' end; this waits until it lets go (30 s at most),
  // so the caller may write into `grads` again.
  absl::StatusOr<StepResult> PushPull(const Params* grads, const StepOptions& options,
                                      Params* params);
  // The same for a gradient the caller shares: when a call failed, this waits at most a second
  // for gRPC to let go, then returns the failure and leaves the gradient to gRPC (whose reference
  // keeps it alive), so that a dead connection that holds it does not hold up the caller's
  // recovery. After a failure the caller must not write into `grads`: it writes into a copy.
  absl::StatusOr<StepResult> PushPull(std::shared_ptr<const Params> grads,
                                      const StepOptions& options, Params* params);
  // Reads every variable.
  absl::StatusOr<int64_t> PullAll(Params* params);
  // Tells every server this replica leaves the job (synchronous steps stop waiting for it),
  // waiting at most `deadline` for each.
  absl::Status LeaveAll(absl::Duration deadline);

 private:
  absl::StatusOr<StepResult> PushPullOnce(const Params* grads, std::shared_ptr<const Params> owner,
                                          const StepOptions& options, Params* params);
  absl::StatusOr<StepResult> Measured(const Params* grads, std::shared_ptr<const Params> owner,
                                      const StepOptions& options, Params* params);
  static std::vector<Shard> Plan(const std::vector<VariableSpec>& variables, int num_ps,
                                 int connections);

  // Endpoint e: partition e % connections of server e / connections.
  int num_endpoints() const { return num_ps() * connections_; }
  int ps_of(int e) const { return e / connections_; }
  int partition(int e) const { return e % connections_; }
  std::string Name(int e) const;

  std::vector<std::unique_ptr<v1::ParameterServer::Stub>> stubs_;  // by endpoint
  std::vector<std::unique_ptr<grpc::GenericStub>> generic_;
  std::vector<std::map<std::string, const Shard*>> shards_of_;  // by server
  const std::vector<std::string> addresses_;
  const int connections_;
  const std::vector<VariableSpec> variables_;
  const std::vector<Shard> plan_;
  const std::string worker_;
};

// gRPC status as absl::Status, keeping the code and message and naming the server.
absl::Status FromGrpc(const grpc::Status& s, const std::string& what);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_
