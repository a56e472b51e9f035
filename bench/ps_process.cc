#include "bench/ps_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "bench/loopback_baselines.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace disttrain::bench {

PsProcess::PsProcess(const std::string& trainer, const Options& o) : port_(FreePort()) {
  nlohmann::json cluster = {{"ps", {absl::StrCat("127.0.0.1:", port_)}},
                            {"worker", nlohmann::json::array()}};
  for (int i = 0; i < o.workers; ++i)
    cluster["worker"].push_back(absl::StrCat("127.0.0.1:", FreePort()));
  // Everything the child needs is built before the fork: between fork and exec it only makes
  // async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.push_back(
      "TF_CONFIG=" +
      nlohmann::json{{"cluster", cluster}, {"task", {{"type", "ps"}, {"index", 0}}}}.dump());
  std::vector<std::string> arg_strings = {trainer,
                                          "--mode=async",
                                          "--learning-rate=0.000001",
                                          absl::StrCat("--ps-connections=", o.partitions),
                                          "--metrics-address=0",
                                          "--tls-dir=" + o.tls_dir};
  std::vector<char*> envp, argv;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (std::string& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (o.cpu >= 0) CPU_SET(o.cpu, &cpus);
  pid_ = fork();
  if (pid_ == 0) {
    if (o.cpu >= 0) sched_setaffinity(0, sizeof(cpus), &cpus);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
}

PsProcess::~PsProcess() {
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
}

std::string PsProcess::address() const { return absl::StrCat("127.0.0.1:", port_); }

double PsProcess::StatusBytes(const std::string& field) const {
  std::ifstream status(absl::StrCat("/proc/", pid_, "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) * 1024;
  }
  return 0;
}

double PsProcess::CpuSeconds() const {
  std::ifstream stat(absl::StrCat("/proc/", pid_, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start after its closing parenthesis.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace disttrain::bench
