#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/kube/config.h"
#include "operator/kube/errors.h"
#include "operator/kube/in_flight_limit.h"
#include "operator/kube/rate_limiter.h"
#include "operator/kube/resource.h"
#include "operator/kube/rest_kube_client.h"

namespace disttrain::kube {
namespace {

using ::testing::HasSubstr;

struct HttpCase {
  int http;
  std::string reason;
  absl::StatusCode code;
};

TEST(ErrorsTest, MapsHttpCodesAndKeepsTheServersMessage) {
  const HttpCase cases[] = {
      {400, "BadRequest", absl::StatusCode::kInvalidArgument},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied},
      {404, "NotFound", absl::StatusCode::kNotFound},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {409, "Conflict", absl::StatusCode::kAborted},
      {410, "Expired", absl::StatusCode::kOutOfRange},
      {422, "Invalid", absl::StatusCode::kInvalidArgument},
      {429, "TooManyRequests", absl::StatusCode::kResourceExhausted},
      {500, "InternalError", absl::StatusCode::kInternal},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
      {504, "Timeout", absl::StatusCode::kDeadlineExceeded},
  };
  for (const HttpCase& c : cases) {
    std::string body =
        R"({"kind":"Status","reason":")" + c.reason + R"(","message":"pods \"x\" is bad"})";
    absl::Status s = StatusFromHttp(c.http, body, "create pods ns/x");
    EXPECT_EQ(s.code(), c.code) << c.http << " " << c.reason;
    EXPECT_THAT(std::string(s.message()), HasSubstr("create pods ns/x: pods \"x\" is bad"));
    EXPECT_EQ(HttpCodeOf(s), c.http);
    EXPECT_EQ(ReasonOf(s), c.reason);
  }
  EXPECT_TRUE(kube::IsAlreadyExists(
      StatusFromHttp(409, R"({"kind":"Status","reason":"AlreadyExists"})", "c")));
  EXPECT_TRUE(
      kube::IsConflict(StatusFromHttp(409, R"({"kind":"Status","reason":"Conflict"})", "c")));
  EXPECT_TRUE(kube::IsGone(StatusFromHttp(410, "{}", "w")));
  EXPECT_TRUE(kube::IsRetryable(StatusFromHttp(429, "{}", "x")));
  EXPECT_TRUE(kube::IsRetryable(StatusFromHttp(503, "{}", "x")));
  EXPECT_FALSE(kube::IsRetryable(StatusFromHttp(403, "{}", "x")));
  EXPECT_THAT(std::string(StatusFromHttp(502, "<html>bad gateway</html>", "get").message()),
              HasSubstr("bad gateway"));
}

TEST(ErrorsTest, ParsesRetryAfterSeconds) {
  EXPECT_EQ(ParseRetryAfter("3"), absl::Seconds(3));
  EXPECT_EQ(ParseRetryAfter(""), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
}

TEST(ResourceTest, BuildsApiPaths) {
  EXPECT_EQ(kPods.Path("ns", "p", "status"), "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(kPods.Path(""), "/api/v1/pods");
  EXPECT_EQ(kDistributedTrainings.Path("ml", "dist"),
            "/apis/disttrain.io/v1/namespaces/ml/distributedtrainings/dist");
  EXPECT_EQ(kNamespaces.Path("ignored", "x"), "/api/v1/namespaces/x");
}

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

TEST(RateLimiterTest, AllowsABurstThenPacesAtQps) {
  RateLimiter limiter(10, 3);
  absl::Time t = absl::FromUnixSeconds(1000);
  EXPECT_EQ(limiter.Reserve(t), absl::ZeroDuration());
  EXPECT_EQ(limiter.Reserve(t), absl::ZeroDuration());
  EXPECT_EQ(limiter.Reserve(t), absl::ZeroDuration());
  EXPECT_EQ(limiter.Reserve(t), absl::Milliseconds(100));
  EXPECT_EQ(limiter.Reserve(t), absl::Milliseconds(200));
  EXPECT_EQ(limiter.Reserve(t + absl::Seconds(1)), absl::ZeroDuration());
}

TEST(InFlightLimitTest, TakesUpToTheLimitAndWaitsForARelease) {
  InFlightLimit limit(2);
  limit.Acquire();
  EXPECT_TRUE(limit.TryAcquire());
  EXPECT_FALSE(limit.TryAcquire()) << "both slots are taken";
  absl::Notification acquired;
  std::thread waiter([&] {
    limit.Acquire();
    acquired.Notify();
  });
  // Bounded: a limit that never counts its waiter fails here instead of hanging the suite.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (limit.waiting() == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  if (limit.waiting() != 1) {
    limit.Release();  // frees the waiter, so the thread can be joined
    waiter.join();
    FAIL() << "the waiter never waited";
  }
  EXPECT_FALSE(acquired.HasBeenNotified());
  limit.Release();
  // The freed slot is the waiter's: a holder trying for more is refused while anyone waits.
  while (!acquired.WaitForNotificationWithTimeout(absl::Milliseconds(1))) {
    if (absl::Now() > give_up + absl::Seconds(10)) {
      ADD_FAILURE() << "the released slot never reached the waiter";
      limit.Release();  // a second slot: the waiter ends and the thread can be joined
      break;
    }
    if (limit.TryAcquire()) {
      ADD_FAILURE() << "TryAcquire took the slot a waiter was waiting for";
      limit.Release();
    }
  }
  waiter.join();
  if (::testing::Test::HasFailure()) return;
  EXPECT_EQ(limit.in_flight(), 2);
  limit.Release();
  limit.Release();
  EXPECT_EQ(limit.in_flight(), 0);
}

TEST(InFlightLimitTest, ZeroMeansNoBound) {
  InFlightLimit limit(0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(limit.TryAcquire());
  limit.Acquire();
  EXPECT_EQ(limit.in_flight(), 101);
}

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kcfg-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

constexpr char kTwoContexts[] = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: ca
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
- name: cb
  cluster: {server: "https://b.example:443", certificate-authority-data: Q0EtQgo=}
contexts:
- name: a
  context: {cluster: ca, user: ua, namespace: ml}
- name: b
  context: {cluster: cb, user: ub}
users:
- name: ua
  user: {client-certificate: certs/admin.crt, client-key: certs/admin.key}
- name: ub
  user: {token: "s3cr3t-token\n"}
)";

TEST_F(KubeconfigTest, ReadsTheCurrentContextWithFilesRelativeToTheKubeconfig) {
  Write("ca.crt", "CA-A");
  std::filesystem::create_directories(dir_ / "certs");
  Write("certs/admin.crt", "CERT");
  Write("certs/admin.key", "KEY");
  auto config = LoadKubeconfig(Write("config", kTwoContexts), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, "CA-A");
  EXPECT_EQ(config->client_cert_pem, "CERT");
  EXPECT_EQ(config->client_key_pem, "KEY");
  EXPECT_EQ(config->namespace_name, "ml");
  EXPECT_TRUE(config->bearer_token.empty());
}

TEST_F(KubeconfigTest, ReadsAnotherContextWithInlineDataAndAToken) {
  auto config = LoadKubeconfig(Write("config", kTwoContexts), "b");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://b.example:443");
  EXPECT_EQ(config->ca_pem, "CA-B\n");
  EXPECT_EQ(config->bearer_token, "s3cr3t-token");
}

struct BadKubeconfig {
  std::string name, text, message;
};

class BadKubeconfigTest : public KubeconfigTest,
                          public ::testing::WithParamInterface<BadKubeconfig> {};

TEST_P(BadKubeconfigTest, SaysWhatIsWrong) {
  auto config = LoadKubeconfig(Write("config", GetParam().text),
                               GetParam().name == "UnknownContext" ? "zzz" : "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr(GetParam().message));
  EXPECT_THAT(std::string(config.status().message()), ::testing::Not(HasSubstr("s3cr3t")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadKubeconfigTest,
    ::testing::Values(
        BadKubeconfig{"NotYaml", "a: [1,", "invalid YAML"},
        BadKubeconfig{"NotAMap", "- 1\n- 2\n", "expected a YAML map"},
        BadKubeconfig{"NoContext", "apiVersion: v1\nkind: Config\n",
                      "no context given and no current-context"},
        BadKubeconfig{"UnknownContext", kTwoContexts, "no context named \"zzz\""},
        BadKubeconfig{"HttpServer",
                      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'http://x:80'}}]\n",
                      "is not https://"},
        BadKubeconfig{"InsecureSkipVerify",
                      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x', "
                      "insecure-skip-tls-verify: true}}]\n",
                      "insecure-skip-tls-verify is set"},
        BadKubeconfig{"MissingCaFile",
                      "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: "
                      "/no/ca.crt}}]\n",
                      "cannot read certificate-authority /no/ca.crt"},
        BadKubeconfig{
            "CertWithoutKey",
            "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
            "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
            "users: [{name: u, user: {client-certificate-data: Q0VSVAo=, token: s3cr3t}}]\n",
            "must be given together"}),
    [](const auto& info) { return info.param.name; });

TEST_F(KubeconfigTest, MissingFileIsNamed) {
  auto config = LoadKubeconfig((dir_ / "nope").string(), "");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("cannot read kubeconfig"));
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
