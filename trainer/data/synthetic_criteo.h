// Criteo-shaped synthetic click data, generated rather than read (no Criteo rows can be had
// here): 13 count-like numeric columns (log-normal, 10% missing) and 26 categorical columns whose
// values follow a Zipf law over the Kaggle day's cardinalities (from 3 to about 10 M distinct
// values), with labels drawn from a hidden logistic model of those features (about 26% positive,
// as Criteo), so a model has something to learn. Row r is a pure function of (split_seed, r):
// every replica and the evaluator agree on it without sharing files.
#ifndef DISTTRAIN_TRAINER_DATA_SYNTHETIC_CRITEO_H_
#define DISTTRAIN_TRAINER_DATA_SYNTHETIC_CRITEO_H_

#include <cstdint>

#include "trainer/data/example.h"

namespace disttrain::trainer {

inline constexpr int kCriteoCategorical = 26;
inline constexpr int kCriteoNumeric = 13;
// Distinct values per categorical column in the Kaggle display-advertising day (the DLRM and
// HugeCTR READMEs list them).
extern const uint64_t kCriteoCardinalities[kCriteoCategorical];

// Row `r`, as SyntheticCriteoSchema()'s columns encode it (trainer/data/schema.h). The
// example source (example_source.h) serves rows 0..rows-1 of the schema, split and shared like
// a file's records.
void SyntheticCriteoRow(uint64_t split_seed, uint64_t r, Example* out);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_DATA_SYNTHETIC_CRITEO_H_
