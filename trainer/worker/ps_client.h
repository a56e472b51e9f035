// The training replicas' client of every parameter server: pulls and pushes all shards in
// parallel (one stream per server), assembling them into whole variables by the shard plan.
// Thread-compatible: one replica's loop uses it from one thread.
#ifndef DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_
#define DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_

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
  // Reads every variable; in synchronous mode first waits (up to `wait`) for `min_step`.
  // Returns the global step of the values (server 0's).
  absl::StatusOr<int64_t> PullAll(int64_t min_step, absl::Duration wait, Params* params);
  // Sends `grads` computed at `step`; returns server 0's answer.
  absl::StatusOr<v1::PushResponse> PushAll(int64_t step, const Params& grads);

 private:
  std::vector<std::unique_ptr<v1::ParameterServer::Stub>> stubs_;
  std::vector<std::string> addresses_;
  const std::vector<VariableSpec> variables_;
  const std::vector<Shard> plan_;
  const std::string worker_;
};

// gRPC status as absl::Status, keeping the code and message and naming the server.
absl::Status FromGrpc(const grpc::Status& s, const std::string& what);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_PS_CLIENT_H_
