#include "operator/kube/rest_kube_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/resource.h"

namespace disttrain::kube {
namespace {

using ::testing::HasSubstr;

TEST(ListQueryTest, EncodesSelectorsAndWatchOptions) {
  ListOptions o;
  o.label_selector = "app.kubernetes.io/managed-by=disttrain-operator,a in (x,y)";
  o.resource_version = "42";
  o.timeout_seconds = 300;
  std::string q = ListQuery(o, true);
  EXPECT_THAT(q, HasSubstr("watch=true"));
  EXPECT_THAT(q, HasSubstr("labelSelector=app.kubernetes.io%2Fmanaged-by%3Ddisttrain-operator%2Ca%"
                           "20in%20%28x%2Cy%29"));
  EXPECT_THAT(q, HasSubstr("resourceVersion=42"));
  EXPECT_THAT(q, HasSubstr("allowWatchBookmarks=true"));
  EXPECT_THAT(q, HasSubstr("timeoutSeconds=300"));
  EXPECT_EQ(ListQuery(ListOptions{.allow_bookmarks = false}, false), "");
}

TEST(RestKubeClientTest, RejectsCredentialsThatAreNotPem) {
  RestConfig config;
  config.server = "https://127.0.0.1:1";
  config.ca_pem = "not a certificate";
  auto client = RestKubeClient::Create(config);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(std::string(client.status().message()),
              HasSubstr("the CA is not a valid PEM certificate"));
}

// A server that accepts connections and never sends a byte: a black-holed API server.
class BlackHole {
 public:
  BlackHole() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~BlackHole() { close(fd_); }
  std::string url() const { return absl::StrCat("https://127.0.0.1:", port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

RestConfig BlackHoleConfig(const BlackHole& server) {
  RestConfig config;
  config.server = server.url();
  config.attempt_timeout = absl::Milliseconds(300);
  config.request_timeout = absl::Seconds(1);
  config.watch_idle_grace = absl::Milliseconds(300);
  return config;
}

TEST(RestKubeClientTest, ARequestToABlackHoledServerEndsWithAnError) {
  BlackHole server;  // the kernel completes the TCP handshake; TLS never starts
  auto client = RestKubeClient::Create(BlackHoleConfig(server));
  ASSERT_TRUE(client.ok());
  int attempts = 0;
  (*client)->SetRequestObserver([&](const std::string&, int code) {
    EXPECT_EQ(code, 0);
    ++attempts;
  });
  absl::StatusOr<nlohmann::json> r = (*client)->Get(kPods, "default", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("gave up after"));
  EXPECT_GE(attempts, 1);
}

TEST(RestKubeClientTest, ABatchToABlackHoledServerEndsWithAnErrorForEachRequest) {
  BlackHole server;
  auto client = RestKubeClient::Create(BlackHoleConfig(server));
  ASSERT_TRUE(client.ok());
  std::atomic<int> attempts{0};
  (*client)->SetRequestObserver([&](const std::string&, int) { ++attempts; });
  std::vector<CreateRequest> creates;
  for (int i = 0; i < 3; ++i) {
    creates.push_back({&kPods, "default", {{"metadata", {{"name", absl::StrCat("p", i)}}}}});
  }
  std::vector<absl::Status> created = (*client)->CreateAll(creates, 2);
  ASSERT_EQ(created.size(), 3u);
  for (const absl::Status& s : created) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
    // The concurrent first attempt failed, then the request went through the retrying path.
    EXPECT_THAT(std::string(s.message()), HasSubstr("gave up after"));
  }
  EXPECT_GE(attempts.load(), 6);
  std::vector<absl::Status> deleted = (*client)->DeleteAll({{&kPods, "default", "p0", {}}}, 4);
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_FALSE(deleted[0].ok());
  EXPECT_TRUE((*client)->CreateAll({}, 4).empty());
}

TEST(RestKubeClientTest, BatchesFromManyThreadsShareTheClientsBoundWithoutWaitingForEachOther) {
  // One request in flight for the whole client, two threads each sending a batch of two: a
  // thread holding a slot never waits for another, so both batches end (each request with its
  // error) instead of each holding what the other waits for.
  BlackHole server;
  RestConfig config = BlackHoleConfig(server);
  config.request_timeout = absl::Milliseconds(500);
  config.max_in_flight = 1;
  auto client = RestKubeClient::Create(config);
  ASSERT_TRUE(client.ok());
  std::vector<std::vector<absl::Status>> results(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::vector<CreateRequest> creates;
      for (int i = 0; i < 2; ++i) {
        creates.push_back(
            {&kPods, "default", {{"metadata", {{"name", absl::StrCat("p", t, "-", i)}}}}});
      }
      results[t] = (*client)->CreateAll(creates, 2);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::vector<absl::Status>& r : results) {
    ASSERT_EQ(r.size(), 2u);
    for (const absl::Status& s : r) EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  }
}

TEST(RestKubeClientTest, AWatchOnABlackHoledServerEndsWithAnError) {
  BlackHole server;
  auto client = RestKubeClient::Create(BlackHoleConfig(server));
  ASSERT_TRUE(client.ok());
  ListOptions options;
  options.timeout_seconds = 1;
  absl::StatusOr<std::unique_ptr<WatchStream>> watch = (*client)->Watch(kPods, "default", options);
  EXPECT_FALSE(watch.ok());
}

}  // namespace
}  // namespace disttrain::kube
