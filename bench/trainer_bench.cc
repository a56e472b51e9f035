// Trainer transport and update benchmarks (run by `make bench`; one JSON line per result).
//
// 1. Push+pull throughput of one parameter server over loopback gRPC for 1, 16 and 64 MiB
//    models, against raw TCP loopback throughput measured in the same run (one connection,
//    like one gRPC stream). Ratio = grpc / tcp.
// 2. Parameter-server update throughput (async SGD applying a 64 MiB gradient) against a plain
//    memory bandwidth loop (memcpy) over the same size.
// Each figure is the median of several repetitions.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "trainer/ps/parameter_server.h"
#include "trainer/ps/shard_plan.h"
#include "trainer/ps/update_rule.h"
#include "trainer/worker/ps_client.h"

namespace {

using namespace disttrain::trainer;  // NOLINT
using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Bytes per second through one TCP loopback connection.
double TcpThroughput(size_t bytes) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  listen(listener, 1);
  std::vector<char> buf(1 << 20, 'x');
  std::thread sender([&] {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    size_t sent = 0;
    while (sent < bytes) {
      ssize_t n = send(fd, buf.data(), std::min(buf.size(), bytes - sent), 0);
      if (n <= 0) break;
      sent += n;
    }
    close(fd);
  });
  int fd = accept(listener, nullptr, nullptr);
  std::vector<char> rbuf(1 << 20);
  auto start = Clock::now();
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = recv(fd, rbuf.data(), rbuf.size(), 0);
    if (n <= 0) break;
    got += n;
  }
  auto end = Clock::now();
  sender.join();
  close(fd);
  close(listener);
  return got / Seconds(start, end);
}

void TransportBench() {
  ParameterServer service(MakeAsyncSgd(1e-6f));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(8 << 20);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  for (size_t mib : {1, 16, 64}) {
    const size_t elements = mib * (1 << 20) / sizeof(float);
    std::vector<VariableSpec> vars = {{"w", elements}};
    PsClient client({address}, vars, PlanShards(vars, 1), "bench");
    Params params = {std::vector<float>(elements, 1.0f)};
    if (!client.InitAll(params, 0).ok()) {
      std::cerr << "init failed\n";
      return;
    }
    const int reps = mib >= 64 ? 5 : (mib >= 16 ? 9 : 25);
    std::vector<double> grpc_rates, tcp_rates;
    for (int r = 0; r < reps; ++r) {
      auto start = Clock::now();
      auto pulled = client.PullAll(0, absl::ZeroDuration(), &params);
      auto pushed = client.PushAll(r, params);
      auto end = Clock::now();
      if (!pulled.ok() || !pushed.ok()) {
        std::cerr << "round trip failed\n";
        return;
      }
      grpc_rates.push_back(2.0 * mib * (1 << 20) / Seconds(start, end));
      tcp_rates.push_back(TcpThroughput(2 * mib * (1 << 20)));
    }
    const double g = Median(grpc_rates), t = Median(tcp_rates);
    std::cout << nlohmann::json{{"bench", "ps_push_pull"}, {"model_mib", mib}, {"repetitions", reps},
                                {"grpc_gb_per_s", g / 1e9}, {"tcp_loopback_gb_per_s", t / 1e9},
                                {"ratio_vs_tcp", g / t}}.dump()
              << std::endl;
  }
  server->Shutdown();
}

void UpdateBench() {
  const size_t elements = 64 * (1 << 20) / sizeof(float);
  ShardTable table;
  table.values["w/0"].assign(elements, 1.0f);
  std::map<std::string, std::vector<float>> grad = {{"w/0", std::vector<float>(elements, 0.5f)}};
  auto rule = MakeAsyncSgd(1e-6f);
  std::vector<float> dst(elements);
  std::vector<double> update, copy;
  for (int r = 0; r < 7; ++r) {
    auto a = Clock::now();
    rule->Push(r, grad, &table);
    auto b = Clock::now();
    std::memcpy(dst.data(), grad["w/0"].data(), elements * sizeof(float));
    auto c = Clock::now();
    update.push_back(elements * sizeof(float) / Seconds(a, b));
    copy.push_back(elements * sizeof(float) / Seconds(b, c));
  }
  const double u = Median(update), m = Median(copy);
  std::cout << nlohmann::json{{"bench", "ps_update"}, {"gradient_mib", 64}, {"update_gb_per_s", u / 1e9},
                              {"memcpy_gb_per_s", m / 1e9}, {"ratio_vs_memcpy", u / m}, {"check", dst[7] + table.values["w/0"][7]}}
                   .dump()
            << std::endl;
}

}  // namespace

int main() {
  TransportBench();
  UpdateBench();
  return 0;
}
