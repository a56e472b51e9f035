// What one PushPull call needs of its parameter server: the server's partitions, each with its
// variables and update rule, and the server's incarnation. ParameterServer implements it; a
// PushPullReactor sees only this, so the server and its calls do not depend on each other.
#ifndef DISTTRAIN_TRAINER_PS_PARTITIONS_H_
#define DISTTRAIN_TRAINER_PS_PARTITIONS_H_

#include <memory>
#include <string>

#include "trainer/ps/shard_store.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {

class Partitions {
 public:
  virtual ~Partitions() = default;
  virtual int partitions() const = 0;
  // A partition's variables, or null before its first Init (or for a partition out of range).
  virtual std::shared_ptr<ShardStore> store(int partition) const = 0;
  virtual UpdateRule& rule(int partition) = 0;
  // Changes when the server restarts: a worker seeing another one knows its state is gone.
  virtual const std::string& incarnation() const = 0;
  // What a call tells its server as it goes (counted: tests observe the server's progress
  // instead of sleeping).
  enum class CallEvent {
    kChunkRead,  // a chunk of a push was read
    kEnded,      // the call ended (its reactor's OnDone)
  };
  virtual void Observe(CallEvent event) = 0;
  // A call from training replica `replica` (its header's worker); `push`: with a gradient.
  virtual void Seen(const std::string& replica, bool push) = 0;
  // The training replicas counted live; -1 when the server does not count them.
  virtual int live_replicas() const = 0;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_PS_PARTITIONS_H_
