// CudaMlp (mlp_kernels.h): the matrix products on cuBLAS, the element-wise stages (bias and
// ReLU, softmax cross-entropy, the ReLU's gradient) in small kernels, all queued on one stream.
// Sums run in another order than on the CPU, so results agree to rounding, not bit for bit.
//
// cuBLAS is column-major and the variables are row-major: a row-major [r x c] matrix is its
// column-major transpose, so C = A B (row-major) is computed as C^T = B^T A^T.
#include <cublas_v2.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "trainer/kernels/cuda_util.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/kernels/parallel_for.h"

namespace disttrain::kernels {
namespace {

absl::Status CheckBlas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(std::string(what) + ": " + cublasGetStatusString(status));
}

// memcpy spread over the machine's cores in 1 MiB pieces from 2 MiB on: one core copies host
// memory at about 5-6 GB/s on the GPU machines measured, and a step copies the whole model in
// (variables to pinned) and out (pinned to gradients): 2 x 22 MiB for 2048,2048.
void CopyOnAllCores(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = size_t{1} << 20;
  if (bytes < 2 * kPiece) {
    std::memcpy(dst, src, bytes);
    return;
  }
  ParallelFor((bytes + kPiece - 1) / kPiece, [&](size_t i) {
    const size_t begin = i * kPiece;
    std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin,
                std::min(kPiece, bytes - begin));
  });
}

// out[i][j] += bias[j], then max(0, .) when relu.
__global__ void BiasActivationKernel(float* out, const float* bias, size_t rows, int cols,
                                     int relu) {
  const size_t n = rows * cols;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    const float v = out[i] + bias[i % cols];
    out[i] = relu && v < 0 ? 0.0f : v;
  }
}

// Per row: loss_i = logsumexp - logit[label]; logits become (softmax - onehot) / n.
__global__ void SoftmaxXentKernel(float* logits, const int32_t* y, float* loss, int n,
                                  int classes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* row = logits + static_cast<size_t>(i) * classes;
  float max = row[0];
  for (int j = 1; j < classes; ++j) max = fmaxf(max, row[j]);
  double sum = 0;
  for (int j = 0; j < classes; ++j) sum += exp(static_cast<double>(row[j] - max));
  const double log_sum = log(sum) + max;
  loss[i] = static_cast<float>(log_sum - row[y[i]]);
  for (int j = 0; j < classes; ++j) row[j] = static_cast<float>(exp(row[j] - log_sum)) / n;
  row[y[i]] -= 1.0f / n;
}

// d[i] = 0 where the ReLU's output a[i] is 0: the gradient does not flow through it.
__global__ void ReluGradKernel(float* d, const float* a, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    if (a[i] <= 0) d[i] = 0;
  }
}

__global__ void FillKernel(float* p, float value, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    p[i] = value;
  }
}

class Stream {
 public:
  Stream() : status_(Check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "stream")) {}
  ~Stream() {
    if (status_.ok()) cudaStreamDestroy(s_);
  }
  const absl::Status& status() const { return status_; }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
  absl::Status status_;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDisableTiming)
      : status_(Check(cudaEventCreateWithFlags(&e_, flags), "event")) {}
  ~Event() {
    if (status_.ok()) cudaEventDestroy(e_);
  }
  const absl::Status& status() const { return status_; }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
  absl::Status status_;
};

class CudaMlpImpl : public CudaMlp {
 public:
  CudaMlpImpl(int device, const MlpShape& shape, int max_batch);
  ~CudaMlpImpl() override;

  absl::Status Init();
  absl::StatusOr<float> LossAndGradient(std::span<const float* const> params, const float* x,
                                        const int32_t* y, int n,
                                        std::span<float* const> grads) override;
  absl::Status StageBatch(const float* x, const int32_t* y, int n) override;
  absl::Status StageBatchFilledBy(int n, const BatchFill& fill) override;
  absl::StatusOr<float> LossAndGradientOfStaged(std::span<const float* const> params,
                                                std::span<float* const> grads) override;
  absl::StatusOr<double> TimeCompute(int iterations) override;

 private:
  // The variables' upload, the passes on the staged batch of `n` examples and the gradients'
  // download.
  absl::StatusOr<float> Run(std::span<const float* const> params, int n,
                            std::span<float* const> grads);
  int layers() const { return static_cast<int>(widths_.size()) - 1; }
  size_t KernelSize(int l) const { return size_t(widths_[l]) * widths_[l + 1]; }
  // Queues the forward and backward pass for the batch's first `n` examples on compute_; with
  // `copy_out`, each layer's gradients are copied to the pinned buffer on copy_ once the layer
  // is done.
  absl::Status Compute(int n, bool copy_out);

  const int device_;
  const int max_batch_;
  std::vector<int> widths_;      // in, hidden..., out: layer l maps widths_[l] to widths_[l + 1]
  std::vector<size_t> offsets_;  // of variable v (kernel 2l, bias 2l+1) in the flat buffers
  size_t total_ = 0;             // floats of all variables
  int last_n_ = 0;               // the batch of the last LossAndGradient, 0 once it is replaced
  int staged_n_ = 0;             // the staged batch's examples, 0 when none is staged
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<Stream> compute_, copy_;
  std::vector<std::unique_ptr<Event>> grads_ready_;   // by layer: on compute_
  std::vector<std::unique_ptr<Event>> grads_copied_;  // by layer: on copy_
  std::unique_ptr<DeviceBuffer<float>> params_, grads_, logits_, loss_, ones_, delta_[2], x_;
  std::unique_ptr<DeviceBuffer<int32_t>> y_;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> activations_;  // by hidden layer
  std::unique_ptr<PinnedBuffer<float>> host_params_, host_grads_, host_loss_, host_x_;
  std::unique_ptr<PinnedBuffer<int32_t>> host_y_;
};

CudaMlpImpl::CudaMlpImpl(int device, const MlpShape& shape, int max_batch)
    : device_(device), max_batch_(max_batch) {
  widths_.push_back(shape.in);
  widths_.insert(widths_.end(), shape.hidden.begin(), shape.hidden.end());
  widths_.push_back(shape.out);
  for (int l = 0; l < layers(); ++l) {
    offsets_.push_back(total_);
    total_ += KernelSize(l);
    offsets_.push_back(total_);
    total_ += widths_[l + 1];
  }
}

CudaMlpImpl::~CudaMlpImpl() {
  cudaSetDevice(device_);
  if (compute_ && compute_->status().ok()) cudaStreamSynchronize(compute_->get());
  if (copy_ && copy_->status().ok()) cudaStreamSynchronize(copy_->get());
  if (blas_ != nullptr) cublasDestroy(blas_);
}

absl::Status CudaMlpImpl::Init() {
  if (absl::Status s = Check(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
  compute_ = std::make_unique<Stream>();
  copy_ = std::make_unique<Stream>();
  for (const Stream* st : {compute_.get(), copy_.get()}) {
    if (!st->status().ok()) return st->status();
  }
  for (int l = 0; l < layers(); ++l) {
    grads_ready_.push_back(std::make_unique<Event>());
    grads_copied_.push_back(std::make_unique<Event>());
    if (!grads_ready_.back()->status().ok()) return grads_ready_.back()->status();
    if (!grads_copied_.back()->status().ok()) return grads_copied_.back()->status();
  }
  const size_t n = max_batch_;
  const int widest_hidden = *std::max_element(widths_.begin() + 1, widths_.end() - 1);
  params_ = std::make_unique<DeviceBuffer<float>>(total_);
  grads_ = std::make_unique<DeviceBuffer<float>>(total_);
  x_ = std::make_unique<DeviceBuffer<float>>(n * widths_.front());
  y_ = std::make_unique<DeviceBuffer<int32_t>>(n);
  host_x_ = std::make_unique<PinnedBuffer<float>>(n * widths_.front());
  host_y_ = std::make_unique<PinnedBuffer<int32_t>>(n);
  logits_ = std::make_unique<DeviceBuffer<float>>(n * widths_.back());
  loss_ = std::make_unique<DeviceBuffer<float>>(n);
  ones_ = std::make_unique<DeviceBuffer<float>>(n);
  for (auto& d : delta_) d = std::make_unique<DeviceBuffer<float>>(n * widest_hidden);
  for (int l = 1; l < layers(); ++l)
    activations_.push_back(std::make_unique<DeviceBuffer<float>>(n * widths_[l]));
  host_params_ = std::make_unique<PinnedBuffer<float>>(total_);
  host_grads_ = std::make_unique<PinnedBuffer<float>>(total_);
  host_loss_ = std::make_unique<PinnedBuffer<float>>(n);
  for (const absl::Status* s :
       {&params_->status(), &grads_->status(), &logits_->status(), &loss_->status(),
        &ones_->status(), &delta_[0]->status(), &delta_[1]->status(), &x_->status(), &y_->status(),
        &host_params_->status(), &host_grads_->status(), &host_loss_->status(), &host_x_->status(),
        &host_y_->status()}) {
    if (!s->ok()) return *s;
  }
  for (const auto& a : activations_) {
    if (!a->status().ok()) return a->status();
  }
  if (absl::Status s = CheckBlas(cublasCreate(&blas_), "cublasCreate"); !s.ok()) return s;
  if (absl::Status s = CheckBlas(cublasSetStream(blas_, compute_->get()), "cublasSetStream");
      !s.ok())
    return s;
  // Plain FP32 products (no TF32 tensor cores): the gradients must agree with the CPU model's to
  // 1e-4, and TF32 keeps 10 bits of mantissa.
  if (absl::Status s = CheckBlas(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "math mode");
      !s.ok())
    return s;
  if (absl::Status s =
          LaunchAsync(FillKernel, BlocksFor(n), 256u, compute_->get(), ones_->get(), 1.0f, n);
      !s.ok())
    return s;
  return Check(cudaStreamSynchronize(compute_->get()), "fill");
}

absl::Status CudaMlpImpl::Compute(int n, bool copy_out) {
  const float one = 1, zero = 0;
  cudaStream_t stream = compute_->get();
  float* const p = params_->get();
  float* const g = grads_->get();
  auto input_of = [&](int l) { return l == 0 ? x_->get() : activations_[l - 1]->get(); };
  auto output_of = [&](int l) {
    return l == layers() - 1 ? logits_->get() : activations_[l]->get();
  };
  absl::Status s;
  for (int l = 0; l < layers() && s.ok(); ++l) {
    const int k = widths_[l], m = widths_[l + 1];
    // out [n x m] = in [n x k] W [k x m]
    s = CheckBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, p + offsets_[2 * l],
                              m, input_of(l), k, &zero, output_of(l), m),
                  "forward product");
    if (s.ok())
      s = LaunchAsync(BiasActivationKernel, BlocksFor(size_t(n) * m), 256u, stream, output_of(l),
                      static_cast<const float*>(p + offsets_[2 * l + 1]), size_t(n), m,
                      l < layers() - 1 ? 1 : 0);
  }
  if (s.ok())
    s = LaunchAsync(SoftmaxXentKernel, BlocksFor(n), 256u, stream, logits_->get(),
                    static_cast<const int32_t*>(y_->get()), loss_->get(), n, widths_.back());
  // Backward, output layer first: `d` [n x m] is d(loss)/d(the layer's output).
  float* d = logits_->get();
  for (int l = layers() - 1; l >= 0 && s.ok(); --l) {
    const int k = widths_[l], m = widths_[l + 1];
    const float* in = input_of(l);
    // dW [k x m] = in^T [k x n] d [n x m]; db [m] = d^T ones
    s = CheckBlas(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, m, k, n, &one, d, m, in, k, &zero,
                              g + offsets_[2 * l], m),
                  "kernel gradient");
    if (s.ok())
      s = CheckBlas(cublasSgemv(blas_, CUBLAS_OP_N, m, n, &one, d, m, ones_->get(), 1, &zero,
                                g + offsets_[2 * l + 1], 1),
                    "bias gradient");
    if (s.ok() && copy_out) {
      // The layer's gradients travel to the host while the layers below are computed.
      const size_t begin = offsets_[2 * l], count = KernelSize(l) + m;
      s = Check(cudaEventRecord(grads_ready_[l]->get(), stream), "event");
      if (s.ok()) s = Check(cudaStreamWaitEvent(copy_->get(), grads_ready_[l]->get()), "wait");
      if (s.ok())
        s = Check(cudaMemcpyAsync(host_grads_->get() + begin, g + begin, count * sizeof(float),
                                  cudaMemcpyDeviceToHost, copy_->get()),
                  "copy gradients");
      if (s.ok()) s = Check(cudaEventRecord(grads_copied_[l]->get(), copy_->get()), "event");
    }
    if (l == 0 || !s.ok()) break;
    // d(input) [n x k] = d [n x m] W^T [m x k], zero where the ReLU cut the input off.
    float* dprev = delta_[(layers() - 1 - l) % 2]->get();
    s = CheckBlas(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, k, n, m, &one, p + offsets_[2 * l],
                              m, d, m, &zero, dprev, k),
                  "input gradient");
    if (s.ok())
      s = LaunchAsync(ReluGradKernel, BlocksFor(size_t(n) * k), 256u, stream, dprev, in,
                      size_t(n) * k);
    d = dprev;
  }
  return s;
}

absl::Status CudaMlpImpl::StageBatch(const float* x, const int32_t* y, int n) {
  const size_t x_count = size_t(n) * widths_.front();
  return StageBatchFilledBy(n, [&](float* host_x, int32_t* host_y) {
    std::memcpy(host_x, x, x_count * sizeof(float));
    std::memcpy(host_y, y, n * sizeof(int32_t));
  });
}

absl::Status CudaMlpImpl::StageBatchFilledBy(int n, const BatchFill& fill) {
  if (n <= 0 || n > max_batch_)
    return absl::InvalidArgumentError("mlp: the batch is empty or larger than allocated");
  if (staged_n_ != 0) return absl::FailedPreconditionError("mlp: a batch is staged already");
  if (absl::Status s = Check(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
  // The buffers are free once the last call's work is over (a call that ran its passes waited
  // for both streams already; one refused for its variables may leave an upload in flight).
  if (absl::Status s = Check(cudaStreamSynchronize(compute_->get()), "mlp"); !s.ok()) return s;
  fill(host_x_->get(), host_y_->get());
  last_n_ = 0;
  cudaStream_t stream = compute_->get();
  absl::Status s =
      Check(cudaMemcpyAsync(x_->get(), host_x_->get(), size_t(n) * widths_.front() * sizeof(float),
                            cudaMemcpyHostToDevice, stream),
            "copy batch");
  if (s.ok())
    s = Check(cudaMemcpyAsync(y_->get(), host_y_->get(), n * sizeof(int32_t),
                              cudaMemcpyHostToDevice, stream),
              "copy labels");
  if (s.ok()) staged_n_ = n;
  return s;
}

absl::StatusOr<float> CudaMlpImpl::LossAndGradientOfStaged(std::span<const float* const> params,
                                                           std::span<float* const> grads) {
  if (staged_n_ == 0) return absl::FailedPreconditionError("mlp: no batch is staged");
  const int n = std::exchange(staged_n_, 0);
  if (absl::Status s = Check(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
  return Run(params, n, grads);
}

absl::StatusOr<float> CudaMlpImpl::LossAndGradient(std::span<const float* const> params,
                                                   const float* x, const int32_t* y, int n,
                                                   std::span<float* const> grads) {
  if (absl::Status s = StageBatch(x, y, n); !s.ok()) return s;
  return LossAndGradientOfStaged(params, grads);
}

absl::StatusOr<float> CudaMlpImpl::Run(std::span<const float* const> params, int n,
                                       std::span<float* const> grads) {
  if (params.size() != offsets_.size() || grads.size() != offsets_.size())
    return absl::InvalidArgumentError("mlp: the variables do not match the model's layers");
  cudaStream_t stream = compute_->get();
  absl::Status s;
  // Every variable once: staged into pinned memory (a host copy) and sent by DMA; the staging of
  // variable v + 1 overlaps the transfer of v, queued after the batch's upload. The previous call
  // finished with both streams, so the pinned buffers are free.
  for (size_t v = 0; v < params.size() && s.ok(); ++v) {
    const size_t count = (v + 1 < offsets_.size() ? offsets_[v + 1] : total_) - offsets_[v];
    CopyOnAllCores(host_params_->get() + offsets_[v], params[v], count * sizeof(float));
    s = Check(cudaMemcpyAsync(params_->get() + offsets_[v], host_params_->get() + offsets_[v],
                              count * sizeof(float), cudaMemcpyHostToDevice, stream),
              "copy variables");
  }
  if (s.ok()) s = Compute(n, /*copy_out=*/true);
  if (s.ok())
    s = Check(cudaMemcpyAsync(host_loss_->get(), loss_->get(), n * sizeof(float),
                              cudaMemcpyDeviceToHost, stream),
              "copy losses");
  // Unpack each layer's gradients from pinned memory as soon as they arrive, output layer first
  // (the order they are produced), while the rest are still computed or in flight.
  for (int l = layers() - 1; l >= 0 && s.ok(); --l) {
    s = Check(cudaEventSynchronize(grads_copied_[l]->get()), "gradients");
    for (int v = 2 * l; v <= 2 * l + 1 && s.ok(); ++v) {
      const size_t count =
          (v + 1 < static_cast<int>(offsets_.size()) ? offsets_[v + 1] : total_) - offsets_[v];
      CopyOnAllCores(grads[v], host_grads_->get() + offsets_[v], count * sizeof(float));
    }
  }
  absl::Status done = Check(cudaStreamSynchronize(stream), "mlp");
  absl::Status copied = Check(cudaStreamSynchronize(copy_->get()), "mlp copies");
  if (!s.ok()) return s;
  if (!done.ok()) return done;
  if (!copied.ok()) return copied;
  last_n_ = n;
  const float* losses = host_loss_->get();
  const double total = std::accumulate(losses, losses + n, 0.0);
  return static_cast<float>(total / n);
}

absl::StatusOr<double> CudaMlpImpl::TimeCompute(int iterations) {
  if (last_n_ == 0 || iterations < 1)
    return absl::FailedPreconditionError(
        "TimeCompute: no batch computed since the last one was staged (call LossAndGradient)");
  if (absl::Status s = Check(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
  Event start(cudaEventDefault), stop(cudaEventDefault);
  if (!start.status().ok()) return start.status();
  if (!stop.status().ok()) return stop.status();
  absl::Status s = Check(cudaEventRecord(start.get(), compute_->get()), "event");
  for (int i = 0; i < iterations && s.ok(); ++i) s = Compute(last_n_, false);
  if (s.ok()) s = Check(cudaEventRecord(stop.get(), compute_->get()), "event");
  if (s.ok()) s = Check(cudaEventSynchronize(stop.get()), "compute");
  float ms = 0;
  if (s.ok()) s = Check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "elapsed time");
  if (!s.ok()) return s;
  return static_cast<double>(ms) / iterations;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaMlp>> CudaMlp::Create(int device, const MlpShape& shape,
                                                         int max_batch) {
  if (absl::Status s = RequireDevice(); !s.ok()) return s;
  if (shape.in <= 0 || shape.out <= 0 || shape.hidden.empty() || max_batch <= 0 ||
      *std::min_element(shape.hidden.begin(), shape.hidden.end()) <= 0)
    return absl::InvalidArgumentError("mlp: needs positive widths, a hidden layer and a batch");
  auto mlp = std::make_unique<CudaMlpImpl>(device, shape, max_batch);
  if (absl::Status s = mlp->Init(); !s.ok()) return s;
  return std::unique_ptr<CudaMlp>(std::move(mlp));
}

}  // namespace disttrain::kernels
