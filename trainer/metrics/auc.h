// The area under the ROC curve of scores for binary labels: the probability that a positive
// example scores above a negative one, ties counted half (the Mann-Whitney U statistic, as
// sklearn.metrics.roc_auc_score computes it). Pure function.
#ifndef DISTTRAIN_TRAINER_METRICS_AUC_H_
#define DISTTRAIN_TRAINER_METRICS_AUC_H_

#include <optional>
#include <vector>

namespace disttrain::trainer {

// Labels are 0 or 1 (above 0.5 counts as 1). No value when every label is the same.
std::optional<double> Auc(const std::vector<float>& scores, const std::vector<float>& labels);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_METRICS_AUC_H_
