// Trainer data-path benchmarks (run by `make bench`; one JSON line per result, each figure the
// median of several repetitions, every ratio against a baseline measured in the same run).
//
//   transport  push+pull of one step through one parameter server (a separate disttrain-trainer
//              process on loopback) for 1/16/64/256 MiB models, against one raw TCP loopback
//              connection moving the same bytes (and two connections at once, half each: two
//              of the trainer's connections per server with nothing but the copies). GB/s = 2 x
//              model / step time; and a raw push+pull (RawPushPullThroughput: the same step over
//              as many raw sockets as the trainer uses connections at that size, with no
//              framework: the physical limit of a parameter server here). The
//              headline is the asynchronous step (pull_early: both directions at once); also
//              reported: the push-then-pull order synchronous training uses, and a pull alone
//              (GB/s = model / time). Each kind runs its steps back to back, as training does
//              (an asynchronous step's update runs after its call and is paid by the next step).
//   memory     peak resident memory of that parameter server process while 4 workers push and
//              pull at once, as a multiple of the model size (from 16 MiB), and the process's
//              own resident memory before it holds a model (libraries, threads: a constant that
//              weighs ~1x the model at 16 MiB and ~0.25x at 64 MiB).
//   update     the async SGD update of a 64 MiB gradient on the server, against a plain memcpy of
//              64 MiB.
//   scaling    aggregate push+pull throughput with 1/2/4/8 workers and 1/2/4 parameter servers
//              (in this process, 16 MiB model).
//
//   tls        push+pull at 1/16/64 MiB through two parameter server processes, one plaintext and
//              one with mutual TLS (--tls-dir), steps interleaved; the time ratio TLS/plaintext.
//
// Usage: trainer_bench [--only transport,memory,update,scaling,tls] [--sizes 1,16,64,256]
//                      [--trainer PATH] [--connections N (the trainer's --ps-connections, default
//                      4)]
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/loopback_baselines.h"
#include "bench/ps_process.h"
#include "common/certificates.h"
#include "nlohmann/json.hpp"
#include "trainer/ps/parameter_server.h"
#include "trainer/ps/update_rule.h"
#include "trainer/wire/shard_plan.h"
#include "trainer/wire/transport_security.h"
#include "trainer/wire/wire.h"
#include "trainer/worker/ps_client.h"

namespace {

using disttrain::IssueCertificate;
using disttrain::KeyAndCertificate;
using disttrain::MakeCertificateAuthority;
using namespace disttrain::trainer;  // NOLINT
using namespace disttrain::bench;    // NOLINT
constexpr double kMiB = 1 << 20;

// What an asynchronous worker asks for at step `r`: the pull overlaps the push.
PsClient::StepOptions Async(int64_t r, bool pull_early = true) {
  PsClient::StepOptions o;
  o.step = r;
  o.pull_early = pull_early;
  return o;
}

std::vector<VariableSpec> Model(size_t mib) { return {{"w", mib * (1 << 20) / sizeof(float)}}; }

// Initialises the servers behind `client`, waiting for them to listen.
bool Init(PsClient* client, const Params& params) {
  absl::Status s;
  for (int attempt = 0; attempt < 300; ++attempt) {
    s = client->InitAll(params, 0);
    if (s.ok()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  std::cerr << "cannot initialise the parameter servers: " << s << "\n";
  return false;
}

void TransportBench(const std::string& trainer, const std::vector<size_t>& sizes, int connections) {
  for (size_t mib : sizes) {
    PsProcess ps(trainer, {.workers = 1, .partitions = connections});
    std::vector<VariableSpec> vars = Model(mib);
    PsClient client({ps.address()}, vars, "bench", connections);
    Params params = {std::vector<float>(vars[0].size, 1.0f)}, grads = params;
    if (!Init(&client, params)) return;
    const int reps = mib >= 256 ? 5 : (mib >= 64 ? 7 : (mib >= 16 ? 9 : 25));
    std::vector<double> rates, sequential_rates, pull_rates, tcp_rates, tcp2_rates, raw_rates;
    // Each kind of step `reps` times back to back after a warm-up, as a training loop runs them:
    // an asynchronous step's update, applied after its call ends, is paid by the next step.
    auto time_steps = [&](const std::function<absl::Status()>& step, double bytes,
                          std::vector<double>* out) {
      for (int r = 0; r <= reps; ++r) {  // r = 0: a warm-up (connections, first allocations)
        auto start = Clock::now();
        if (absl::Status s = step(); !s.ok()) {
          std::cerr << "push+pull failed: " << s << "\n";
          return false;
        }
        if (r > 0) out->push_back(bytes / Seconds(start, Clock::now()));
      }
      return true;
    };
    int64_t global_step = 0;
    const double both_ways = 2.0 * mib * kMiB;
    auto push_pull = [&](bool pull_early) {
      return [&, pull_early] {
        return client.PushPull(&grads, Async(global_step++, pull_early), &params).status();
      };
    };
    if (!time_steps(push_pull(true), both_ways, &rates) ||
        !time_steps(push_pull(false), both_ways, &sequential_rates) ||
        !time_steps([&] { return client.PullAll(&params).status(); }, mib * kMiB, &pull_rates)) {
      return;
    }
    for (int r = 0; r < reps; ++r) {
      tcp_rates.push_back(TcpThroughput(2 * mib * (1 << 20)));
      tcp2_rates.push_back(TcpThroughput(2 * mib * (1 << 20), 2));
    }
    // The same repetitions, step after step, for the raw push+pull over as many connections.
    raw_rates.push_back(
        RawPushPullThroughput(mib * (1 << 20), PartitionsUsed(mib * (1 << 20), connections), reps));
    const double g = Median(rates), t = Median(tcp_rates);
    std::cout << nlohmann::json{{"bench", "ps_push_pull"},
                                {"model_mib", mib},
                                {"repetitions", reps},
                                {"push_pull_gb_per_s", g / 1e9},
                                {"push_then_pull_gb_per_s", Median(sequential_rates) / 1e9},
                                {"pull_only_gb_per_s", Median(pull_rates) / 1e9},
                                {"tcp_loopback_gb_per_s", t / 1e9},
                                {"ratio_vs_tcp", g / t},
                                {"tcp_two_connections_gb_per_s", Median(tcp2_rates) / 1e9},
                                {"ratio_vs_tcp_two_connections", g / Median(tcp2_rates)},
                                {"raw_push_pull_gb_per_s", Median(raw_rates) / 1e9},
                                {"ratio_vs_raw_push_pull", g / Median(raw_rates)}}
                     .dump()
              << std::endl;
  }
}

// Certificates of one CA for a server and a client on 127.0.0.1, as the operator issues them.
struct TlsPair {
  TlsMaterial server, client;
  std::string server_dir;
};

std::optional<TlsPair> MakeTlsPair() {
  const absl::Time now = absl::Now();
  absl::StatusOr<KeyAndCertificate> ca =
      MakeCertificateAuthority("bench", now - absl::Hours(1), now + absl::Hours(24));
  if (!ca.ok()) return std::nullopt;
  TlsPair out;
  for (auto [name, m] : {std::pair{"ps-0", &out.server}, std::pair{"worker-0", &out.client}}) {
    absl::StatusOr<KeyAndCertificate> c =
        IssueCertificate(*ca, {name, {"127.0.0.1"}, now - absl::Hours(1), now + absl::Hours(24)});
    if (!c.ok()) return std::nullopt;
    *m = {ca->certificate_pem, c->certificate_pem, c->key_pem};
  }
  out.server_dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("disttrain-bench-tls-", getpid()))
          .string();
  std::filesystem::create_directories(out.server_dir);
  std::ofstream(out.server_dir + "/ca.crt") << out.server.ca_pem;
  std::ofstream(out.server_dir + "/tls.crt") << out.server.certificate_pem;
  std::ofstream(out.server_dir + "/tls.key") << out.server.key_pem;
  return out;
}

bool CpuHasAesNi() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) == 0) return line.find(" aes ") != std::string::npos;
  }
  return false;
}

// Push+pull through a parameter server process with and without mutual TLS, the two servers
// side by side and their steps interleaved (plaintext, TLS, plaintext, ...) so both see the same
// machine. OPENSSL_ia32cap="~0x200000200000000" in the environment hides AES-NI from OpenSSL (the
// servers inherit it): what AES-NI gives.
void TlsBench(const std::string& trainer, const std::vector<size_t>& sizes, int connections) {
  std::optional<TlsPair> tls = MakeTlsPair();
  if (!tls) {
    std::cerr << "cannot issue the bench's certificates\n";
    return;
  }
  const char* cap = std::getenv("OPENSSL_ia32cap");
  for (size_t mib : sizes) {
    PsProcess plain_ps(trainer, {.workers = 1, .partitions = connections});
    PsProcess tls_ps(trainer,
                     {.workers = 1, .partitions = connections, .tls_dir = tls->server_dir});
    std::vector<VariableSpec> vars = Model(mib);
    UsePlaintext();
    PsClient plain({plain_ps.address()}, vars, "bench", connections);
    UseTls(tls->client);
    PsClient secure({tls_ps.address()}, vars, "bench", connections);
    UsePlaintext();
    Params params = {std::vector<float>(vars[0].size, 1.0f)}, grads = params;
    if (!Init(&plain, params) || !Init(&secure, params)) return;
    const int reps = mib >= 64 ? 7 : (mib >= 16 ? 9 : 25);
    std::vector<double> plain_rates, tls_rates;
    int64_t step = 0;
    for (int r = 0; r <= reps; ++r) {  // r = 0: a warm-up
      for (auto [client, out] : {std::pair{&plain, &plain_rates}, std::pair{&secure, &tls_rates}}) {
        auto start = Clock::now();
        if (absl::Status s = client->PushPull(&grads, Async(step), &params).status(); !s.ok()) {
          std::cerr << "push+pull failed: " << s << "\n";
          return;
        }
        if (r > 0) out->push_back(2.0 * mib * kMiB / Seconds(start, Clock::now()));
      }
      ++step;
    }
    const double p = Median(plain_rates), t = Median(tls_rates);
    std::cout << nlohmann::json{{"bench", "ps_push_pull_tls"},
                                {"model_mib", mib},
                                {"repetitions", reps},
                                {"cpu_aes_ni", CpuHasAesNi()},
                                {"openssl_ia32cap", cap == nullptr ? "" : cap},
                                {"plaintext_gb_per_s", p / 1e9},
                                {"tls_gb_per_s", t / 1e9},
                                {"tls_time_ratio", p / t},
                                {"tls_cost_percent", 100.0 * (p / t - 1.0)}}
                     .dump()
              << std::endl;
  }
  std::filesystem::remove_all(tls->server_dir);
}

void MemoryBench(const std::string& trainer, const std::vector<size_t>& sizes, int connections) {
  constexpr int kWorkers = 4, kRounds = 6;
  for (size_t mib : sizes) {
    if (mib < 16) continue;  // the process's own ~16 MiB is many times the model
    PsProcess ps(trainer, {.workers = kWorkers, .partitions = connections});
    std::vector<VariableSpec> vars = Model(mib);
    double before_init = 0;
    {
      PsClient init({ps.address()}, vars, "init", connections);
      for (int attempt = 0; attempt < 300 && !init.DescribeAll().ok(); ++attempt)
        absl::SleepFor(absl::Milliseconds(100));  // until it listens
      before_init = ps.Rss();
      if (!Init(&init, {std::vector<float>(vars[0].size, 1.0f)})) return;
    }
    const double after_init = ps.Rss();
    std::atomic<int> failures{0};
    std::vector<std::thread> workers;
    auto start = Clock::now();
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        PsClient client({ps.address()}, vars, absl::StrCat("worker-", w), connections);
        Params params, grads = {std::vector<float>(vars[0].size, 0.5f)};
        for (int r = 0; r < kRounds; ++r)
          failures += !client.PushPull(&grads, Async(r), &params).ok();
      });
    }
    for (auto& t : workers) t.join();
    const double seconds = Seconds(start, Clock::now());
    const double peak = ps.PeakRss();
    std::cout << nlohmann::json{{"bench", "ps_memory"},
                                {"model_mib", mib},
                                {"workers", kWorkers},
                                {"steps_per_worker", kRounds},
                                {"failures", failures.load()},
                                {"rss_before_init_mib", before_init / kMiB},
                                {"rss_after_init_mib", after_init / kMiB},
                                {"peak_rss_mib", peak / kMiB},
                                {"peak_rss_over_model", peak / (mib * kMiB)},
                                {"aggregate_gb_per_s",
                                 2.0 * mib * kMiB * kWorkers * kRounds / seconds / 1e9}}
                     .dump()
              << std::endl;
  }
}

void UpdateBench() {
  const size_t elements = 64 * (1 << 20) / sizeof(float);
  ShardStore store({{"w/0", std::vector<float>(elements, 1.0f)}}, 0, 1);
  const std::vector<float> grad(elements, 0.5f);
  const DensePush push({{"w/0", grad}});
  auto rule = MakeAsyncSgd(1e-6f);
  std::vector<float> dst(elements, 0.0f);
  std::vector<double> update, copy;
  for (int r = 0; r < 9; ++r) {
    auto a = Clock::now();
    rule->Apply(r, push, &store);
    auto b = Clock::now();
    std::memcpy(dst.data(), grad.data(), elements * sizeof(float));
    auto c = Clock::now();
    update.push_back(elements * sizeof(float) / Seconds(a, b));
    copy.push_back(elements * sizeof(float) / Seconds(b, c));
  }
  const double u = Median(update), m = Median(copy);
  std::cout << nlohmann::json{{"bench", "ps_update"},
                              {"gradient_mib", 64},
                              {"update_gb_per_s", u / 1e9},
                              {"memcpy_gb_per_s", m / 1e9},
                              {"ratio_vs_memcpy", u / m},
                              {"check", dst[7] + store.Read(0)->values[7]}}
                   .dump()
            << std::endl;
}

void ScalingBench(int connections) {
  constexpr size_t kMib = 16;
  constexpr int kRounds = 8, kReps = 3;
  std::vector<VariableSpec> vars = Model(kMib);
  for (int num_ps : {1, 2, 4}) {
    std::vector<std::unique_ptr<ParameterServer>> services;
    std::vector<std::unique_ptr<grpc::Server>> servers;
    std::vector<std::string> addresses;
    for (int i = 0; i < num_ps; ++i) {
      services.push_back(
          std::make_unique<ParameterServer>([] { return MakeAsyncSgd(1e-6f); }, 1, connections));
      grpc::ServerBuilder builder;
      int port = 0;
      builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
      builder.SetMaxReceiveMessageSize(8 << 20);
      wire::SetTransportArgs(&builder);
      builder.RegisterService(services.back().get());
      servers.push_back(builder.BuildAndStart());
      addresses.push_back(absl::StrCat("127.0.0.1:", port));
    }
    {
      PsClient init(addresses, vars, "init", connections);
      if (!Init(&init, {std::vector<float>(vars[0].size, 1.0f)})) return;
    }
    for (int workers : {1, 2, 4, 8}) {
      std::vector<double> rates;
      for (int rep = 0; rep < kReps; ++rep) {
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        auto start = Clock::now();
        for (int w = 0; w < workers; ++w) {
          threads.emplace_back([&, w] {
            PsClient client(addresses, vars, absl::StrCat("worker-", w), connections);
            Params params, grads = {std::vector<float>(vars[0].size, 0.5f)};
            for (int r = 0; r < kRounds; ++r)
              failures += !client.PushPull(&grads, Async(r), &params).ok();
          });
        }
        for (auto& t : threads) t.join();
        if (failures > 0) std::cerr << failures << " failed steps\n";
        rates.push_back(2.0 * kMib * kMiB * workers * kRounds / Seconds(start, Clock::now()));
      }
      std::cout << nlohmann::json{{"bench", "ps_scaling"},
                                  {"model_mib", kMib},
                                  {"ps", num_ps},
                                  {"workers", workers},
                                  {"repetitions", kReps},
                                  {"aggregate_gb_per_s", Median(rates) / 1e9}}
                       .dump()
                << std::endl;
    }
    for (auto& s : services) s->Close();
    for (auto& s : servers) s->Shutdown();
  }
}

}  // namespace

int main(int argc, char** argv) {
  wire::KeepFreedMemoryMapped();  // as disttrain-trainer does
  wire::PollConnectsPromptly();
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  std::set<std::string> only = {"transport", "memory", "update", "scaling"};
  std::vector<size_t> sizes = {1, 16, 64, 256};
  std::vector<size_t> tls_sizes = {1, 16, 64};
  int connections = 4;  // disttrain-trainer's --ps-connections default
  std::string trainer =
      (std::filesystem::path(argv[0]).parent_path() / "disttrain-trainer").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--only") {
      only.clear();
      for (absl::string_view s : absl::StrSplit(value, ',')) only.insert(std::string(s));
    } else if (flag == "--sizes") {
      sizes.clear();
      tls_sizes.clear();
      for (absl::string_view s : absl::StrSplit(value, ',')) {
        size_t v;
        if (!absl::SimpleAtoi(s, &v)) return 2;
        sizes.push_back(v);
        tls_sizes.push_back(v);
      }
    } else if (flag == "--trainer") {
      trainer = value;
    } else if (flag == "--connections") {
      if (!absl::SimpleAtoi(value, &connections) || connections < 1) return 2;
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  if ((only.count("transport") || only.count("memory") || only.count("tls")) &&
      access(trainer.c_str(), X_OK) != 0) {
    std::cerr << "trainer_bench: no disttrain-trainer at " << trainer << " (pass --trainer)\n";
    return 2;
  }
  if (only.count("transport")) TransportBench(trainer, sizes, connections);
  if (only.count("memory")) MemoryBench(trainer, sizes, connections);
  if (only.count("tls")) TlsBench(trainer, tls_sizes, connections);
  if (only.count("update")) UpdateBench();
  if (only.count("scaling")) ScalingBench(connections);
  return 0;
}
