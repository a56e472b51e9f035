// The parameter-server role's exit codes (RunParameterServer, ps_role.cc), which the operator's
// restart policy reads.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "gtest/gtest.h"
#include "trainer/options.h"
#include "trainer/roles.h"

namespace disttrain::trainer {
namespace {

// ps 0 of a cluster with a chief, at `address`.
ClusterSpec Ps(const std::string& address) {
  TfConfig c;
  c.cluster = {{"ps", {address}}, {"chief", {"127.0.0.1:1"}}};
  c.task_type = "ps";
  absl::StatusOr<ClusterSpec> spec = MakeClusterSpec(c);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ClusterSpec{};
}

TEST(PsRoleTest, StopsOnSigtermWithExitCodeZero) {
  const std::atomic<bool> stop = true;
  EXPECT_EQ(RunParameterServer(Ps("127.0.0.1:0"), TrainerOptions{}, stop), kExitOk);
}

TEST(PsRoleTest, AnUnknownModeIsAUsageError) {
  TrainerOptions o;
  o.mode = "hogwild2";
  const std::atomic<bool> stop = true;
  EXPECT_EQ(RunParameterServer(Ps("127.0.0.1:0"), o, stop), kExitUsage);
}

TEST(PsRoleTest, APortItCannotListenOnIsATransientFailure) {
  // Another process holds the port (bound without SO_REUSEPORT, so gRPC cannot share it).
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::atomic<bool> stop = true;
  EXPECT_EQ(RunParameterServer(Ps(absl::StrCat("127.0.0.1:", ntohs(addr.sin_port))),
                               TrainerOptions{}, stop),
            kExitTransient);
  close(fd);
}

}  // namespace
}  // namespace disttrain::trainer
