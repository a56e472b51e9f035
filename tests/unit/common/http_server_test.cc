// Tests common/http_server.cc: what a probe or a Prometheus scrape gets back.
#include "common/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace disttrain {
namespace {

// Sends `request` to 127.0.0.1:port and reads until the server closes the connection.
std::string Exchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "connect failed";
  }
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, n);
  close(fd);
  return out;
}

std::string Get(int port, const std::string& path) {
  return Exchange(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Handle("/metrics", [] {
      return HttpResponse{200, "text/plain; version=0.0.4", "up 1\n"};
    });
    server_.Handle("/readyz", [] { return HttpResponse{503, "text/plain", "not leading\n"}; });
    ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
    ASSERT_GT(server_.port(), 0);
  }
  HttpServer server_;
};

TEST_F(HttpServerTest, ServesAHandlerWithItsTypeAndLength) {
  EXPECT_EQ(Get(server_.port(), "/metrics"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
            "Content-Length: 5\r\nConnection: close\r\n\r\nup 1\n");
}

TEST_F(HttpServerTest, AQueryStringStillFindsThePath) {
  EXPECT_NE(Get(server_.port(), "/metrics?name=up").find("\r\n\r\nup 1\n"), std::string::npos);
}

TEST_F(HttpServerTest, AHandlerSetsTheStatusCode) {
  EXPECT_EQ(Get(server_.port(), "/readyz").rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u);
}

TEST_F(HttpServerTest, UnknownPathsAreNotFoundAndOtherMethodsNotAllowed) {
  EXPECT_EQ(Get(server_.port(), "/nope").rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  EXPECT_EQ(Exchange(server_.port(), "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                .rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0),
            0u);
}

TEST_F(HttpServerTest, KeepsServingAfterAClientHangsUpMidRequest) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server_.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  send(fd, "GET /metr", 9, MSG_NOSIGNAL);
  close(fd);
  EXPECT_NE(Get(server_.port(), "/metrics").find("up 1\n"), std::string::npos);
}

TEST(HttpServerStartTest, RefusesAnAddressWithoutAPort) {
  HttpServer server;
  absl::Status s = server.Start("localhost");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("\"localhost\" is not host:port"), std::string::npos) << s;
}

TEST(HttpServerStartTest, AddressZeroDisablesTheServer) {
  HttpServer server;
  EXPECT_TRUE(server.Start("0").ok());
  EXPECT_EQ(server.port(), 0);
}

TEST(HttpServerStartTest, APortInUseIsUnavailable) {
  HttpServer first;
  ASSERT_TRUE(first.Start("127.0.0.1:0").ok());
  HttpServer second;
  absl::Status s = second.Start("127.0.0.1:" + std::to_string(first.port()));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
}

}  // namespace
}  // namespace disttrain
