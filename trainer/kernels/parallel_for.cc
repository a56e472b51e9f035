#include "trainer/kernels/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace disttrain::kernels {
namespace {

class Pool {
 public:
  Pool() {
    const unsigned helpers = std::max(1u, std::thread::hardware_concurrency()) - 1;
    for (unsigned i = 0; i < helpers; ++i)
      std::thread([this] { Help(); }).detach();  // live as long as the process
    helpers_ = static_cast<int>(helpers);
  }

  void Run(size_t n, const std::function<void(size_t)>& fn) {
    if (helpers_ == 0 || n < 2 || !busy_.TryLock()) {
      for (size_t i = 0; i < n; ++i) fn(i);
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      fn_ = &fn;
      n_ = n;
      next_.store(0);
      ++generation_;
    }
    Work(fn, n);
    absl::MutexLock lock(&mu_);
    auto finished = [this]()
                        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_ == n_ && active_ == 0; };
    mu_.Await(absl::Condition(&finished));
    fn_ = nullptr;
    done_ = 0;
    busy_.Unlock();
  }

 private:
  void Work(const std::function<void(size_t)>& fn, size_t n) {
    size_t mine = 0;
    for (size_t i = next_.fetch_add(1); i < n; i = next_.fetch_add(1)) {
      fn(i);
      ++mine;
    }
    absl::MutexLock lock(&mu_);
    done_ += mine;
  }

  void Help() {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(size_t)>* fn;
      size_t n;
      {
        absl::MutexLock lock(&mu_);
        auto work = [this, &seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return generation_ != seen && fn_ != nullptr;
        };
        mu_.Await(absl::Condition(&work));
        seen = generation_;
        fn = fn_;
        n = n_;
        ++active_;
      }
      Work(*fn, n);
      absl::MutexLock lock(&mu_);
      --active_;
    }
  }

  int helpers_ = 0;
  absl::Mutex busy_;  // one update at a time uses the helpers
  absl::Mutex mu_;
  const std::function<void(size_t)>* fn_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t n_ ABSL_GUARDED_BY(mu_) = 0;
  size_t done_ ABSL_GUARDED_BY(mu_) = 0;
  int active_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<size_t> next_{0};
};

}  // namespace

void ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  static Pool* pool = new Pool();  // never destroyed: its threads outlive main's statics
  pool->Run(n, fn);
}

}  // namespace disttrain::kernels
