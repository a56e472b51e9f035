// The baselines trainer_bench measures the data path against, on loopback in the same run: plain
// TCP (what the kernel alone moves) and a raw push+pull (what any parameter server could reach
// here), plus the small timing helpers they share with the bench.
#ifndef DISTTRAIN_BENCH_LOOPBACK_BASELINES_H_
#define DISTTRAIN_BENCH_LOOPBACK_BASELINES_H_

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <vector>

namespace disttrain::bench {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v);
double Seconds(Clock::time_point a, Clock::time_point b);

// A TCP socket bound to a free loopback port, and that address.
int BoundLoopbackSocket(sockaddr_in* addr);
int FreePort();

// Bytes per second through `flows` TCP loopback connections at once, each carrying bytes / flows
// (one: the classic single-stream figure; two: what push+pull over the trainer's two connections
// per server could reach at best, both directions' copies sharing the same cores). The receiver
// reads into one reused 1 MiB buffer, so this is cache-hot, unlike a parameter server's step.
double TcpThroughput(size_t bytes, int flows = 1);

// The physical limit of a parameter server's step on this machine: push+pull over `flows` raw
// TCP loopback connections with no framework at all, the data handled as a parameter server must
// handle it. Each connection carries model_bytes / flows of gradient one way and as much of
// variables the other, at once (as pull_early); the server receives the whole gradient into a
// buffer before applying it (a torn push must change nothing), applies SGD to its variables and
// sends them from where they lie; the worker receives them straight into its own. Unlike the
// TCP baselines, every byte lands in and leaves from model-sized (cache-cold) memory. Server and
// worker are threads of this process. Returns push+pull bytes per second (2 x model / step),
// the median of `reps` steps after one warm-up.
double RawPushPullThroughput(size_t model_bytes, int flows, int reps);

}  // namespace disttrain::bench

#endif  // DISTTRAIN_BENCH_LOOPBACK_BASELINES_H_
