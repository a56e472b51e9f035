// The MLP's forward and backward pass (in -> hidden layers -> out, ReLU, softmax cross-entropy;
// the same math as trainer/models/mlp_model.cc) on one GPU, through cuBLAS. Built when the build
// has a CUDA compiler; otherwise Create reports FailedPrecondition.
//
// A CudaMlp is one tower's device state, made once and used every step: weights, activations
// and gradients in device memory sized for the largest batch, a cuBLAS handle, a compute stream
// and a copy stream, and pinned host buffers the transfers go through (DMA at full speed, and
// asynchronous). Each call uploads the variables once and downloads each layer's gradients as
// soon as the backward pass has produced them, while it computes the layers below.
// Thread-compatible: one call at a time per object; objects on one or several devices may run
// concurrently from different threads (each call selects its device).
#ifndef DISTTRAIN_TRAINER_KERNELS_MLP_KERNELS_H_
#define DISTTRAIN_TRAINER_KERNELS_MLP_KERNELS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace disttrain::kernels {

struct MlpShape {
  int in = 0;
  std::vector<int> hidden;  // widths, input side first; at least one layer
  int out = 0;
};

class CudaMlp {
 public:
  // Allocates everything for batches of at most `max_batch` examples on CUDA device `device`.
  static absl::StatusOr<std::unique_ptr<CudaMlp>> Create(int device, const MlpShape& shape,
                                                         int max_batch);
  virtual ~CudaMlp() = default;

  // `params` and `grads`: per layer, input side first, its kernel [rows x cols, row-major] then
  // its bias, as MlpModel::Variables() lists them. `x` is n rows of `in` features, `y` their
  // labels. Returns the mean loss and writes the mean gradients.
  virtual absl::StatusOr<float> LossAndGradient(std::span<const float* const> params,
                                                const float* x, const int32_t* y, int n,
                                                std::span<float* const> grads) = 0;

  // Starts the upload of a batch (`n` rows of `in` features and their labels) and returns once
  // its host copy is staged: the caller may reuse `x` and `y` at once, and the upload runs while
  // the caller does other work (the worker exchanges variables). A context has one batch buffer:
  // FailedPrecondition when a batch is staged already. (A second buffer, staged from another
  // thread during a call, made the worker's steps slower: docs/notes/trainer-gpu.md.)
  virtual absl::Status StageBatch(const float* x, const int32_t* y, int n) = 0;
  // StageBatch with the batch written by `fill` straight into the pinned staging buffers (n rows
  // of `in` floats, n labels), saving a host copy; `fill` is not called when the buffer is taken.
  using BatchFill = std::function<void(float* x, int32_t* y)>;
  virtual absl::Status StageBatchFilledBy(int n, const BatchFill& fill) = 0;
  // LossAndGradient on the staged batch, which it uses up; FailedPrecondition when none is
  // staged. LossAndGradient is StageBatch then this: FailedPrecondition as well while a batch
  // waits staged.
  virtual absl::StatusOr<float> LossAndGradientOfStaged(std::span<const float* const> params,
                                                        std::span<float* const> grads) = 0;

  // Milliseconds of device time of the forward and backward pass alone, on the variables and the
  // batch of the last LossAndGradient call (no transfer between host and device), the mean over
  // `iterations`: the compute a worker's step time is compared with (bench/gpu_bench.py).
  // FailedPrecondition before the first call, or once another batch is staged.
  virtual absl::StatusOr<double> TimeCompute(int iterations) = 0;
};

}  // namespace disttrain::kernels

#endif  // DISTTRAIN_TRAINER_KERNELS_MLP_KERNELS_H_
