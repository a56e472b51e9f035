// One PushPull call on the server (see the proto): read the header; for a push, wait until the
// store admits it, keep every chunk in the gRPC buffers it arrived in (no copy), apply it from
// there once it is complete and the client half-closed; wait for the asked step; write a status,
// then every block of the variables as a chunk that points at the block (no copy). With pull_early
// (asynchronous training) the reply is written while the push is still being read. Owned by gRPC:
// deletes itself in OnDone.
// Reactions never block; waiting happens in callbacks (admission, step).
#ifndef DISTTRAIN_TRAINER_PS_PUSH_PULL_REACTOR_H_
#define DISTTRAIN_TRAINER_PS_PUSH_PULL_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "disttrain/trainer/v1/parameter_server.pb.h"
#include "trainer/ps/partitions.h"
#include "trainer/ps/push.h"
#include "trainer/ps/shard_store.h"
#include "trainer/ps/update_rule.h"
#include "trainer/wire/wire.h"

namespace disttrain::trainer {

class PushPullReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  PushPullReactor(Partitions* server, grpc::CallbackServerContext* ctx);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  void OnHeader(bool ok);
  void OnChunk(bool ok);
  void Admitted();
  void WaitAndReply();
  void Reply();
  void WriteBlock();
  void Fail(const grpc::Status& status);
  // Reads and writes may both end the call (pull_early): the first one does. While the push
  // waits for its turn, the finish waits too (Admitted() carries it out).
  void FinishOnce(const grpc::Status& status);
  // Ends an admitted push (applied or not): its buffers go, the next push may come in.
  void EndPush();

  Partitions* const server_;
  grpc::CallbackServerContext* const ctx_;
  bool have_header_ = false;
  grpc::ByteBuffer in_, out_;
  wire::Decoded decoded_;
  v1::PushPullHeader header_;
  UpdateRule* rule_ = nullptr;  // of the header's partition
  std::shared_ptr<ShardStore> store_;
  std::unique_ptr<ReceivedPush> push_;  // set once admitted
  std::atomic<bool> dropped_{false};    // pull_early: written by the read side while the reply runs
  bool early_ = false;                  // pull_early: the reply is written while the push is read
  absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool admitting_ ABSL_GUARDED_BY(mu_) = false;  // waiting for the store to admit the push
  // A finish asked for while admitting_ (the pull failed): Admitted() carries it out.
  std::optional<grpc::Status> deferred_finish_ ABSL_GUARDED_BY(mu_);
  bool push_done_ ABSL_GUARDED_BY(mu_) = false;   // pull_early: applied
  bool reply_done_ ABSL_GUARDED_BY(mu_) = false;  // pull_early: every block written
  std::vector<ShardStore::BlockRef> snapshot_;    // consistent pulls only
  size_t next_block_ = 0;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_PUSH_PULL_REACTOR_H_
