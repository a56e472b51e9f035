// Parameter servers behind real gRPC servers on 127.0.0.1, each on a free port (port 0), for the
// unit tests of what talks to them (the replicas' client, the training loop). Not thread-safe:
// the test's main thread starts, restarts and stops them.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_LOOPBACK_SERVERS_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_LOOPBACK_SERVERS_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "trainer/ps/parameter_server.h"
#include "trainer/worker/ps_client.h"

namespace disttrain::trainer::testing {

class LoopbackServers {
 public:
  using MakeRule = std::function<std::unique_ptr<UpdateRule>()>;

  ~LoopbackServers() { Stop(); }

  // `num_ps` more servers of `partitions` partitions, each partition's rule made by `make_rule`.
  // They hold the embedding ids of their share among all the servers started so far.
  void Start(int num_ps, const MakeRule& make_rule, int partitions = 1) {
    total_ = static_cast<int>(services_.size()) + num_ps;
    for (int i = 0; i < num_ps; ++i) {
      services_.emplace_back();
      servers_.emplace_back();
      ports_.push_back(0);
      Serve(static_cast<int>(services_.size()) - 1, make_rule, partitions);
    }
  }

  // Server `i` stops (its calls in flight end) and a fresh one, without variables, takes its
  // port: a parameter server's pod restarted.
  void Restart(int i, const MakeRule& make_rule, int partitions = 1) {
    StopOne(i);
    Serve(i, make_rule, partitions);
  }

  void Stop() {
    for (size_t i = 0; i < services_.size(); ++i) StopOne(static_cast<int>(i));
  }

  std::vector<std::string> addresses() const {
    std::vector<std::string> out;
    for (int port : ports_) out.push_back(absl::StrCat("127.0.0.1:", port));
    return out;
  }
  ParameterServer& service(int i) { return *services_[i]; }

 private:
  void Serve(int i, const MakeRule& make_rule, int partitions) {
    services_[i] = std::make_unique<ParameterServer>(make_rule, 1, partitions);
    services_[i]->HoldIdsOf(i, total_);
    grpc::ServerBuilder builder;
    int bound = 0;
    builder.AddListeningPort(absl::StrCat("127.0.0.1:", ports_[i]),
                             grpc::InsecureServerCredentials(), &bound);
    builder.RegisterService(services_[i].get());
    servers_[i] = builder.BuildAndStart();
    ports_[i] = bound;
  }

  void StopOne(int i) {
    if (servers_[i] == nullptr) return;
    services_[i]->Close();
    servers_[i]->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    servers_[i].reset();
  }

  std::vector<std::unique_ptr<ParameterServer>> services_;
  std::vector<std::unique_ptr<grpc::Server>> servers_;
  std::vector<int> ports_;
  int total_ = 0;
};

// InitAll, retried on UNAVAILABLE as the replica's loop retries it (Tolerate): a first
// connection to a server just started failed now and then (1 run in 30 to 100: "failed to
// connect to all addresses; ... No such file or directory"), and gRPC then fails calls fast
// until its reconnect backoff (about 1 s) has passed.
inline absl::Status InitAll(PsClient* client, const Params& params, int64_t step) {
  absl::Status s;
  for (int attempt = 0; attempt < 12; ++attempt) {
    s = client->InitAll(params, step);
    if (s.code() != absl::StatusCode::kUnavailable) break;
    absl::SleepFor(absl::Milliseconds(250));
  }
  return s;
}

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_LOOPBACK_SERVERS_H_
