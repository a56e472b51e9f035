// The unit in which tensors travel between workers and parameter servers, and in which a server
// stores them: the constant the server (ps/), its clients (worker/) and the checkpoints share.
#ifndef DISTTRAIN_TRAINER_WIRE_CHUNKS_H_
#define DISTTRAIN_TRAINER_WIRE_CHUNKS_H_

#include <cstddef>

namespace disttrain::trainer {

// 128 Ki floats = 512 KiB per chunk and per block, well under gRPC's 4 MiB default message
// limit. Smaller blocks pin less memory while being sent (an update copies a block a pull is
// sending): a ps serving 4 workers a 64 MiB model peaked at 2.53x the model with 1 MiB blocks and
// 2.46x with 512 KiB.
inline constexpr size_t kChunkElements = 128 * 1024;

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WIRE_CHUNKS_H_
