// The training schemes of the Distributed TensorFlow Guide, parsed once from --mode into a type.
// A scheme has two halves: what a worker does between two exchanges with the parameter servers
// (trainer/worker/schemes/, a WorkerScheme) and how a server applies what it receives
// (trainer/ps/, an UpdateRule). SchemeConfig carries the hyper-parameters of both halves; the
// update rules are written out in docs/trainer.md. Pure; thread-safe.
#ifndef DISTTRAIN_TRAINER_SCHEMES_SCHEME_H_
#define DISTTRAIN_TRAINER_SCHEMES_SCHEME_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace disttrain::trainer {

enum class Scheme {
  kHogwild,      // async SGD, each push applied at once ("async" is a synonym)
  kDownpour,     // λ local Adagrad steps, the summed gradients committed, Adagrad on the servers
  kDownpourSgd,  // DOWNPOUR-Easy: λ local SGD steps, the summed gradients committed, SGD on servers
  kAgn,          // λ local SGD steps, the summed gradients / λ committed, SGD on the servers
  kSync,         // SyncReplicasOptimizer; optionally one learning rate per worker
  kSagn,         // AGN windows aggregated synchronously
  kDynSgd,       // async SGD with each commit scaled by 1 / (staleness + 1)
  kAeasgd,       // asynchronous elastic averaging every τ local steps
  kAeamsgd,      // AEASGD with Nesterov momentum in the local steps
};

struct SchemeConfig {
  Scheme scheme = Scheme::kSync;
  float learning_rate = 0.1f;  // η
  int local_steps = 1;         // λ (DOWNPOUR, AGN, SAGN) or τ (EASGD); 1 for the others
  float elastic_alpha = 0;     // α of EASGD
  // α was not given: it follows the live replicas, DefaultElasticAlpha(η, replicas).
  bool elastic_alpha_follows = false;
  float momentum = 0;  // δ of EAMSGD
  float adagrad_initial_accumulator = 0.1f;
  int replicas_to_aggregate = 1;  // sync, sagn
  // sync, sagn: --replicas-to-aggregate 0, one gradient per live replica as workers come and go.
  bool aggregate_every_replica = false;
  // sync: worker i's gradients count with rate worker_learning_rates[i] (by replica rank);
  // empty: every worker uses η.
  std::vector<float> worker_learning_rates;
};

// "hogwild" (or "async"), "downpour", "downpour-sgd", "agn", "sync", "sagn", "dynsgd", "aeasgd",
// "aeamsgd". InvalidArgument names the valid ones.
absl::StatusOr<Scheme> ParseScheme(std::string_view mode);
const char* SchemeName(Scheme scheme);
// Synchronous schemes wait for every step's aggregate (and drop stale pushes).
bool IsSynchronous(Scheme scheme);
// Schemes whose worker runs several local steps per exchange (--local-steps applies).
bool HasLocalSteps(Scheme scheme);
// The paper's α = ηρ with ρ = 5, kept under 0.9 / p so p workers' pulls on the center stay
// stable (its condition β = pα < 1).
float DefaultElasticAlpha(double learning_rate, int replicas);
// Every --mode value, for messages and help.
const char* SchemeNames();

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_SCHEMES_SCHEME_H_
