// The parameter server's gRPC service: holds its shards of the variables, serves pulls in
// bounded chunks, applies pushes through an UpdateRule, and (synchronous mode) makes pulls wait
// for the step they ask for. Thread-safe: gRPC calls it from many threads.
#ifndef DISTTRAIN_TRAINER_PS_PARAMETER_SERVER_H_
#define DISTTRAIN_TRAINER_PS_PARAMETER_SERVER_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "disttrain/trainer/v1/parameter_server.grpc.pb.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {

// 256 Ki floats = 1 MiB per chunk, well under gRPC's 4 MiB default message limit.
inline constexpr size_t kChunkElements = 256 * 1024;

class ParameterServer final : public v1::ParameterServer::Service {
 public:
  explicit ParameterServer(std::unique_ptr<UpdateRule> rule);

  grpc::Status Init(grpc::ServerContext* ctx, grpc::ServerReader<v1::InitRequest>* reader,
                    v1::InitResponse* response) override;
  grpc::Status Pull(grpc::ServerContext* ctx, const v1::PullRequest* request,
                    grpc::ServerWriter<v1::TensorChunk>* writer) override;
  grpc::Status Push(grpc::ServerContext* ctx, grpc::ServerReader<v1::PushRequest>* reader,
                    v1::PushResponse* response) override;
  grpc::Status Describe(grpc::ServerContext* ctx, const v1::DescribeRequest* request,
                        v1::DescribeResponse* response) override;

 private:
  std::unique_ptr<UpdateRule> rule_ ABSL_GUARDED_BY(mu_);
  absl::Mutex mu_;
  ShardTable table_ ABSL_GUARDED_BY(mu_);
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
  const std::string incarnation_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_PARAMETER_SERVER_H_
