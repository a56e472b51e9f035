// One thread per output element of each stage; simple and exact enough to check against the CPU
// (sums run in a different order, so results agree to rounding, not bit for bit).
#include <vector>

#include "trainer/kernels/cuda_util.h"
#include "trainer/kernels/mlp_kernels.h"

namespace disttrain::kernels {
namespace {

// out[i][j] = bias[j] + sum_k a[i][k] w[k][j], then max(0, .) when relu.
__global__ void AffineKernel(const float* a, const float* w, const float* bias, float* out, int n,
                             int rows, int cols, int relu) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n * cols) return;
  const int i = idx / cols, j = idx % cols;
  float s = bias[j];
  for (int k = 0; k < rows; ++k) s += a[i * rows + k] * w[k * cols + j];
  out[idx] = relu && s < 0 ? 0.0f : s;
}

// Per row: loss_i = logsumexp - logit[label]; logits become (softmax - onehot) / n.
__global__ void SoftmaxXentKernel(float* logits, const int32_t* y, float* loss, int n,
                                  int classes) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* row = logits + i * classes;
  float max = row[0];
  for (int j = 1; j < classes; ++j) max = fmaxf(max, row[j]);
  double sum = 0;
  for (int j = 0; j < classes; ++j) sum += exp(static_cast<double>(row[j] - max));
  const double log_sum = log(sum) + max;
  loss[i] = static_cast<float>(log_sum - row[y[i]]);
  for (int j = 0; j < classes; ++j) row[j] = static_cast<float>(exp(row[j] - log_sum)) / n;
  row[y[i]] -= 1.0f / n;
}

// gw[k][j] = sum_i a[i][k] d[i][j]; gb[j] = sum_i d[i][j] (threads k == rows do the bias).
__global__ void WeightGradKernel(const float* a, const float* d, float* gw, float* gb, int n,
                                 int rows, int cols) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (rows + 1) * cols) return;
  const int k = idx / cols, j = idx % cols;
  float s = 0;
  if (k == rows) {
    for (int i = 0; i < n; ++i) s += d[i * cols + j];
    gb[j] = s;
  } else {
    for (int i = 0; i < n; ++i) s += a[i * rows + k] * d[i * cols + j];
    gw[idx] = s;
  }
}

// dh[i][k] = h[i][k] > 0 ? sum_j w2[k][j] d[i][j] : 0.
__global__ void HiddenGradKernel(const float* h, const float* w2, const float* d, float* dh, int n,
                                 int hidden, int out) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n * hidden) return;
  const int i = idx / hidden, k = idx % hidden;
  float s = 0;
  if (h[idx] > 0) {
    for (int j = 0; j < out; ++j) s += w2[k * out + j] * d[i * out + j];
  }
  dh[idx] = s;
}

unsigned Blocks(int n) { return static_cast<unsigned>((n + 255) / 256); }

}  // namespace

absl::StatusOr<float> CudaMlpLossAndGradient(const MlpShape& m,
                                             std::span<const float* const> params, const float* x,
                                             const int32_t* y, int n,
                                             std::span<float* const> grads) {
  if (absl::Status s = RequireDevice(); !s.ok()) return s;
  if (m.hidden <= 0 || params.size() != 4 || grads.size() != 4 || n <= 0)
    return absl::InvalidArgumentError("mlp: needs a hidden layer, 4 variables and a batch");
  const size_t sizes[4] = {size_t(m.in) * m.hidden, size_t(m.hidden), size_t(m.hidden) * m.out,
                           size_t(m.out)};
  DeviceBuffer<float> w1(sizes[0]), b1(sizes[1]), w2(sizes[2]), b2(sizes[3]);
  DeviceBuffer<float> gw1(sizes[0]), gb1(sizes[1]), gw2(sizes[2]), gb2(sizes[3]);
  DeviceBuffer<float> dx(size_t(n) * m.in), h(size_t(n) * m.hidden), dh(size_t(n) * m.hidden);
  DeviceBuffer<float> logits(size_t(n) * m.out), loss(n);
  DeviceBuffer<int32_t> dy(n);
  DeviceBuffer<float>* device_params[4] = {&w1, &b1, &w2, &b2};
  absl::Status s;
  for (int v = 0; v < 4 && s.ok(); ++v) s = device_params[v]->Upload(params[v]);
  if (s.ok()) s = dx.Upload(x);
  if (s.ok()) s = dy.Upload(y);
  const float* cw1 = w1.get();
  const float* cw2 = w2.get();
  if (s.ok())
    s = Launch(AffineKernel, Blocks(n * m.hidden), 256u, static_cast<const float*>(dx.get()), cw1,
               static_cast<const float*>(b1.get()), h.get(), n, m.in, m.hidden, 1);
  if (s.ok())
    s = Launch(AffineKernel, Blocks(n * m.out), 256u, static_cast<const float*>(h.get()), cw2,
               static_cast<const float*>(b2.get()), logits.get(), n, m.hidden, m.out, 0);
  if (s.ok())
    s = Launch(SoftmaxXentKernel, Blocks(n), 256u, logits.get(),
               static_cast<const int32_t*>(dy.get()), loss.get(), n, m.out);
  if (s.ok())
    s = Launch(WeightGradKernel, Blocks((m.hidden + 1) * m.out), 256u,
               static_cast<const float*>(h.get()), static_cast<const float*>(logits.get()),
               gw2.get(), gb2.get(), n, m.hidden, m.out);
  if (s.ok())
    s = Launch(HiddenGradKernel, Blocks(n * m.hidden), 256u, static_cast<const float*>(h.get()),
               cw2, static_cast<const float*>(logits.get()), dh.get(), n, m.hidden, m.out);
  if (s.ok())
    s = Launch(WeightGradKernel, Blocks((m.in + 1) * m.hidden), 256u,
               static_cast<const float*>(dx.get()), static_cast<const float*>(dh.get()), gw1.get(),
               gb1.get(), n, m.in, m.hidden);
  DeviceBuffer<float>* device_grads[4] = {&gw1, &gb1, &gw2, &gb2};
  for (int v = 0; v < 4 && s.ok(); ++v) s = device_grads[v]->Download(grads[v]);
  std::vector<float> losses(n);
  if (s.ok()) s = loss.Download(losses.data());
  if (!s.ok()) return s;
  double total = 0;
  for (float l : losses) total += l;
  return static_cast<float>(total / n);
}

}  // namespace disttrain::kernels
