// A new row's initial values, drawn from the table's seed and the row's id alone: the same on
// whichever parameter server creates the row, and after a restart, so no coordination is needed.
#ifndef DISTTRAIN_TRAINER_EMBEDDING_ROW_INIT_H_
#define DISTTRAIN_TRAINER_EMBEDDING_ROW_INIT_H_

#include <cstdint>

namespace disttrain::trainer::embedding {

// `dim` values uniform on [-a, a], a = stddev * sqrt(3) (so their standard deviation is
// `stddev`); zeros when stddev is 0.
void InitialRow(uint64_t seed, uint64_t id, int dim, float stddev, float* out);

}  // namespace disttrain::trainer::embedding

#endif  // DISTTRAIN_TRAINER_EMBEDDING_ROW_INIT_H_
