#include "bench/loopback_baselines.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

namespace disttrain::bench {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int BoundLoopbackSocket(sockaddr_in* addr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  *addr = sockaddr_in{};
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(addr), sizeof(*addr));
  socklen_t len = sizeof(*addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(addr), &len);
  return fd;
}

int FreePort() {
  sockaddr_in addr;
  close(BoundLoopbackSocket(&addr));
  return ntohs(addr.sin_port);
}

double TcpThroughput(size_t bytes, int flows) {
  struct Flow {
    int listener = -1, fd = -1;
    sockaddr_in addr{};
    size_t got = 0;
  };
  std::vector<Flow> f(flows);
  const size_t each = bytes / flows;
  for (Flow& x : f) {
    x.listener = BoundLoopbackSocket(&x.addr);
    listen(x.listener, 1);
  }
  std::vector<std::thread> senders;
  for (Flow& x : f) {
    senders.emplace_back([&x, each] {
      std::vector<char> buf(1 << 20, 'x');
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      connect(fd, reinterpret_cast<sockaddr*>(&x.addr), sizeof(x.addr));
      size_t sent = 0;
      while (sent < each) {
        ssize_t n = send(fd, buf.data(), std::min(buf.size(), each - sent), 0);
        if (n <= 0) break;
        sent += n;
      }
      close(fd);
    });
  }
  for (Flow& x : f) x.fd = accept(x.listener, nullptr, nullptr);
  auto start = Clock::now();
  std::vector<std::thread> receivers;
  for (Flow& x : f) {
    receivers.emplace_back([&x, each] {
      std::vector<char> rbuf(1 << 20);
      while (x.got < each) {
        ssize_t n = recv(x.fd, rbuf.data(), rbuf.size(), 0);
        if (n <= 0) break;
        x.got += n;
      }
    });
  }
  for (std::thread& t : receivers) t.join();
  auto end = Clock::now();
  for (std::thread& t : senders) t.join();
  size_t got = 0;
  for (Flow& x : f) {
    got += x.got;
    close(x.fd);
    close(x.listener);
  }
  return got / Seconds(start, end);
}

namespace {

bool SendAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = send(fd, c, std::min<size_t>(n, 1 << 20), MSG_NOSIGNAL);
    if (k <= 0) return false;
    c += k;
    n -= k;
  }
  return true;
}

bool RecvAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = recv(fd, c, std::min<size_t>(n, 1 << 20), 0);
    if (k <= 0) return false;
    c += k;
    n -= k;
  }
  return true;
}

}  // namespace

double RawPushPullThroughput(size_t model_bytes, int flows, int reps) {
  const size_t n = model_bytes / sizeof(float) / flows;  // floats per connection
  struct Conn {
    int listener = -1, server = -1, client = -1;
    sockaddr_in addr{};
    std::vector<float> var, grad, params, grads;
  };
  std::vector<Conn> c(flows);
  for (Conn& x : c) {
    x.listener = BoundLoopbackSocket(&x.addr);
    listen(x.listener, 1);
    x.client = socket(AF_INET, SOCK_STREAM, 0);
    connect(x.client, reinterpret_cast<sockaddr*>(&x.addr), sizeof(x.addr));
    x.server = accept(x.listener, nullptr, nullptr);
    x.var.assign(n, 1.0f);
    x.grad.assign(n, 0.0f);
    x.params.assign(n, 0.0f);
    x.grads.assign(n, 0.5f);
  }
  std::vector<std::thread> servers;
  for (Conn& x : c) {
    servers.emplace_back([&x, n] {
      for (uint64_t step; RecvAll(x.server, &step, sizeof(step));) {
        std::thread pull([&x, n] { SendAll(x.server, x.var.data(), n * sizeof(float)); });
        const bool ok = RecvAll(x.server, x.grad.data(), n * sizeof(float));
        pull.join();
        if (!ok) break;
        for (size_t k = 0; k < n; ++k) x.var[k] -= 1e-6f * x.grad[k];
      }
    });
  }
  std::vector<double> rates;
  for (int r = 0; r <= reps; ++r) {
    auto start = Clock::now();
    std::vector<std::thread> workers;
    for (Conn& x : c) {
      workers.emplace_back([&x, n, r] {
        const uint64_t step = r;
        SendAll(x.client, &step, sizeof(step));
        std::thread push([&x, n] { SendAll(x.client, x.grads.data(), n * sizeof(float)); });
        RecvAll(x.client, x.params.data(), n * sizeof(float));
        push.join();
      });
    }
    for (std::thread& t : workers) t.join();
    if (r > 0) rates.push_back(2.0 * model_bytes / Seconds(start, Clock::now()));
  }
  for (Conn& x : c) shutdown(x.client, SHUT_RDWR);
  for (std::thread& t : servers) t.join();
  for (Conn& x : c) {
    close(x.client);
    close(x.server);
    close(x.listener);
  }
  return Median(rates);
}

}  // namespace disttrain::bench
