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
#include "trainer/ps/shard_plan.h"

namespace disttrain::trainer {

struct PsState {
  bool initialized = false;
  int64_t global_step = 0;
  std::string incarnation;
};

class PsClient {
 public:
  PsClient(const std::vector<std::string>& addresses, std::vector<VariableSpec> variables,
           std::vector<Shard> plan, std::string worker_name);

  int num_ps() const { return static_cast<int>(stubs_.size()); }
  absl::StatusOr<std::vector<PsState>> DescribeAll();
  // Writes `params` (whole variables) into every server at `global_step`.
  absl::Status InitAll(const Params& params, int64_t global_step);
  struct StepResult {
    int64_t global_step = 0;  // of the pulled values (server 0's)
    bool dropped = false;     // server 0 dropped the push as stale (synchronous mode)
    std::vector<std::string> incarnations;
  };
  // Sends `grads` computed at `step` (null: pull only), then reads every variable into `params`;
  // the pull first waits (up to `wait`) for the servers to reach `min_step`.
  absl::StatusOr<StepResult> PushPull(const Params* grads, int64_t step, int64_t min_step, absl::Duration wait,
                                      Params* params);
  // Reads every variable.
  absl::StatusOr<int64_t> PullAll(Params* params);

 private:
  std::vector<std::unique_ptr<v1::ParameterServer::Stub>> stubs_;
  std::vector<std::unique_ptr<grpc::GenericStub>> generic_;
  std::vector<std::map<std::string, const Shard*>> shards_of_;  // by server
  std::vector<std::string> addresses_;
  const std::vector<VariableSpec> variables_;
  const std::vector<Shard> plan_;
  const std::string worker_;
};

// gRPC status as absl::Status, keeping the code and message and naming the server.
absl::Status FromGrpc(const grpc::Status& s, const std::string& what);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_
