// Spreads independent pieces of work (the blocks of a parameter server's update, the rows of a
// batch being gathered) over the machine's cores: a fixed set of threads made once per process
// (one per core, the caller being one of them), never a thread per call. While one call uses the
// pool, a concurrent one runs on its caller's thread alone (its cores are busy anyway).
// Thread-safe.
#ifndef DISTTRAIN_TRAINER_KERNELS_PARALLEL_FOR_H_
#define DISTTRAIN_TRAINER_KERNELS_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

namespace disttrain::kernels {

// Runs fn(i) for every i in [0, n), each once, and returns when all are done.
void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

}  // namespace disttrain::kernels

#endif  // DISTTRAIN_TRAINER_KERNELS_PARALLEL_FOR_H_
