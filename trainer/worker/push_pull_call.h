// One PushPull call from a training replica to one parameter server, on gRPC's callback API:
// writes the header and (for a push) the gradient's chunks as slices pointing at the gradient,
// one write in flight at a time; reads the status and copies each pulled chunk once, straight
// into the replica's variables. Calls to every server run at once; Wait() blocks until done.
#ifndef DISTTRAIN_TRAINER_WORKER_PUSH_PULL_CALL_H_
#define DISTTRAIN_TRAINER_WORKER_PUSH_PULL_CALL_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "disttrain/trainer/v1/parameter_server.pb.h"
#include "trainer/models/model.h"
#include "trainer/wire/shard_plan.h"
#include "trainer/wire/wire.h"

namespace disttrain::trainer {

inline constexpr char kPushPullMethod[] = "/disttrain.trainer.v1.ParameterServer/PushPull";

class PushPullCall : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `shards`: the shards server `ps` holds, by name. `grads` (null: pull only) must stay
  // unchanged until `pin` and every copy of it are released; pulled values go to `params`.
  PushPullCall(const v1::PushPullHeader& header, const std::map<std::string, const Shard*>& shards,
               const Params* grads, std::shared_ptr<const void> pin, Params* params);

  void Start(grpc::GenericStub* stub, absl::Duration timeout);
  // The call's outcome, once it ended.
  absl::Status Wait();
  const v1::PushPullStatus& status() const { return status_; }

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  bool NextWrite();  // false when every chunk was written
  void Abort(std::string why);

  const std::map<std::string, const Shard*>& shards_;
  const Params* const grads_;
  std::shared_ptr<const void> pin_;
  Params* const params_;
  grpc::ClientContext ctx_;
  grpc::ByteBuffer out_, in_;
  wire::Decoded decoded_;
  // The next chunk to write: shard (iterator into shards_) and offset within it.
  std::map<std::string, const Shard*>::const_iterator write_shard_;
  size_t write_offset_ = 0;
  bool have_status_ = false;
  v1::PushPullStatus status_;
  size_t received_ = 0, expected_ = 0;  // pulled elements
  std::string error_;                   // set by reactions before OnDone
  grpc::Status result_;
  absl::Notification done_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_PUSH_PULL_CALL_H_
