#include "trainer/launcher/local_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/tf_config.h"
#include "nlohmann/json.hpp"
#include "trainer/launcher/local_certificates.h"
#include "trainer/options.h"

namespace disttrain::trainer {
namespace {

constexpr char kUsage[] =
    "disttrain-trainer local --ps N --workers M [--chief] [--evaluator] [--tls] -- <trainer "
    "flags>\n"
    "\n"
    "Runs a whole training cluster on this machine (see disttrain-trainer --help for the\n"
    "trainer flags). The last stdout line is a JSON summary; the exit code is the chief's.";

struct Task {
  std::string type;
  int index = 0;
  std::string name;
  pid_t pid = -1;
  int restarts = 0;
  bool finished = false;
  int exit_code = -1;
  std::vector<std::thread> readers;
};

std::mutex g_out_mu;
std::atomic<int> g_signal{0};  // the SIGTERM/SIGINT the launcher received, 0 before

// How long tasks get to exit after SIGTERM before they are killed, at least (ps 0 may hold the
// final checkpoint for the evaluator for --final-snapshot-seconds).
constexpr absl::Duration kStopGrace = absl::Seconds(10);

// argv or envp for execve: owns the strings, hands out the char* array.
class ExecArgs {
 public:
  void Add(std::string s) { strings_.push_back(std::move(s)); }
  char* const* Get() {
    pointers_.clear();
    for (std::string& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
    return pointers_.data();
  }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// Ports that are free now; the sockets stay open until all are picked so none repeats.
std::vector<int> FreePorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ports.push_back(ntohs(addr.sin_port));
    fds.push_back(fd);
  }
  for (int fd : fds) close(fd);
  return ports;
}

class Launcher {
 public:
  // `metrics_port` > 0: task k (in tasks_ order) serves /metrics on metrics_host:metrics_port+k;
  // 0: each on a free port (logged); < 0: no /metrics.
  // `final_eval`: how long the evaluator may go on after the chief succeeded, to evaluate the
  // final checkpoint; `stop_grace`: how long tasks get between SIGTERM and SIGKILL.
  Launcher(TfConfig cluster, std::vector<std::string> trainer_args, int max_restarts,
           std::string metrics_host, int metrics_port, absl::Duration final_eval,
           absl::Duration stop_grace)
      : cluster_(std::move(cluster)),
        args_(std::move(trainer_args)),
        max_restarts_(max_restarts),
        metrics_host_(std::move(metrics_host)),
        metrics_port_(metrics_port),
        final_eval_(final_eval),
        stop_grace_(stop_grace) {}

  int Run();
  // Each task gets --tls-dir=LocalTlsDir(base, ...) (local_certificates.h).
  void set_tls_base(std::string base) { tls_base_ = std::move(base); }

 private:
  void Start(Task& t);
  void Reap(Task& t, int status);
  // Restarts a task that is not the chief as the operator would: parameter servers always,
  // others on a retryable exit code (>= 128), up to the restart budget.
  void MaybeRestart(Task& t);
  void Read(int fd, std::string prefix, bool is_stdout);
  // Ends the run: SIGTERM to every task still running, no more restarts, SIGKILL after the grace.
  // `spare_evaluator`: the chief succeeded; the evaluator is left to evaluate the final
  // checkpoint and exit by itself, within final_eval_.
  void BeginStop(const std::string& why, bool spare_evaluator);
  // Ends the evaluator's reprieve: once it exited, or with SIGTERM when its time is up.
  void EndFinalEvaluation();
  void Signal(int sig);

  TfConfig cluster_;
  std::vector<std::string> args_;
  const int max_restarts_;
  const std::string metrics_host_;
  const int metrics_port_;
  const absl::Duration final_eval_;
  const absl::Duration stop_grace_;
  std::string tls_base_;
  std::vector<Task> tasks_;
  Task* evaluator_ = nullptr;
  bool sparing_evaluator_ = false;
  absl::Time final_eval_deadline_ = absl::InfiniteFuture();
  std::mutex events_mu_;
  nlohmann::json last_eval_, chief_done_;
  bool stopping_ = false;
  absl::Time kill_at_ = absl::InfiniteFuture();
};

void Launcher::Read(int fd, std::string prefix, bool is_stdout) {
  FILE* f = fdopen(fd, "r");
  char* line = nullptr;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    std::string text(line, n);
    if (is_stdout && !text.empty() && text[0] == '{') {
      nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_object()) {
        std::lock_guard<std::mutex> lock(events_mu_);
        if (j.value("event", "") == "eval") last_eval_ = j;
        if (j.value("event", "") == "done") chief_done_ = j;
      }
    }
    std::lock_guard<std::mutex> lock(g_out_mu);
    std::string out = prefix + text;
    std::fwrite(out.data(), 1, out.size(), is_stdout ? stdout : stderr);
    std::fflush(is_stdout ? stdout : stderr);
  }
  free(line);
  fclose(f);
}

void Launcher::Start(Task& t) {
  TfConfig config = cluster_;
  config.task_type = t.type;
  config.task_index = t.index;
  // Everything the child needs is built before fork: between fork and exec only
  // async-signal-safe calls (sigprocmask, dup2, close, execve, _exit).
  ExecArgs argv, envp;
  argv.Add("/proc/self/exe");
  for (const std::string& a : args_) argv.Add(a);
  if (!tls_base_.empty()) argv.Add("--tls-dir=" + LocalTlsDir(tls_base_, t.type, t.index));
  const int ordinal = static_cast<int>(&t - tasks_.data());
  argv.Add(metrics_port_ < 0 ? std::string("--metrics-address=0")
                             : absl::StrCat("--metrics-address=", metrics_host_, ":",
                                            metrics_port_ == 0 ? 0 : metrics_port_ + ordinal));
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TF_CONFIG=", 10) != 0) envp.Add(*e);
  }
  envp.Add("TF_CONFIG=" + SerializeTfConfig(config));
  char* const* child_argv = argv.Get();
  char* const* child_envp = envp.Get();
  sigset_t none;
  sigemptyset(&none);
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    LogError("pipe failed", {{"task", t.name}});
    return;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    LogError("pipe failed", {{"task", t.name}});
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(out[1], 1);  // dup2 clears close-on-exec on the copies
    dup2(err[1], 2);
    execve("/proc/self/exe", child_argv, child_envp);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    LogError("fork failed", {{"task", t.name}});
    return;
  }
  t.pid = pid;
  t.finished = false;
  const std::string prefix = absl::StrCat("[", t.name, "] ");
  t.readers.emplace_back([this, fd = out[0], prefix] { Read(fd, prefix, true); });
  t.readers.emplace_back([this, fd = err[0], prefix] { Read(fd, prefix, false); });
  LogInfo("started task",
          {{"task", t.name}, {"pid", absl::StrCat(pid)}, {"restarts", absl::StrCat(t.restarts)}});
}

void Launcher::Signal(int sig) {
  for (Task& t : tasks_) {
    if (sparing_evaluator_ && &t == evaluator_) continue;
    if (!t.finished && t.pid > 0) kill(t.pid, sig);
  }
}

void Launcher::BeginStop(const std::string& why, bool spare_evaluator) {
  if (stopping_) return;
  stopping_ = true;
  kill_at_ = absl::Now() + stop_grace_;
  sparing_evaluator_ = spare_evaluator && evaluator_ != nullptr && !evaluator_->finished &&
                       final_eval_ > absl::ZeroDuration();
  if (sparing_evaluator_) {
    final_eval_deadline_ = absl::Now() + final_eval_;
    LogInfo(
        "stopping every task but the evaluator, which evaluates the final checkpoint",
        {{"why", why}, {"final_eval_seconds", absl::StrCat(absl::ToInt64Seconds(final_eval_))}});
  } else {
    // The evaluator, too: on SIGTERM it evaluates the newest checkpoint and exits.
    LogInfo("stopping every task", {{"why", why}});
  }
  Signal(SIGTERM);
}

void Launcher::EndFinalEvaluation() {
  sparing_evaluator_ = false;
  if (evaluator_->finished) return;
  LogWarning("the evaluator did not evaluate the final checkpoint in time; stopping it",
             {{"final_eval_seconds", absl::StrCat(absl::ToInt64Seconds(final_eval_))}});
  kill(evaluator_->pid, SIGTERM);
  kill_at_ = absl::Now() + stop_grace_;
}

void Launcher::Reap(Task& t, int status) {
  t.finished = true;
  t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  LogInfo("task exited", {{"task", t.name}, {"exit_code", absl::StrCat(t.exit_code)}});
}

void Launcher::MaybeRestart(Task& t) {
  const bool retryable = t.exit_code >= 128;
  const bool restart = t.type == "ps" || retryable;
  if (restart && t.restarts < max_restarts_) {
    ++t.restarts;
    LogInfo("restarting task", {{"task", t.name}, {"restart", absl::StrCat(t.restarts)}});
    Start(t);
  }
}

int Launcher::Run() {
  const absl::Time start = absl::Now();
  for (const auto& [type, hosts] : cluster_.cluster) {
    for (int i = 0; i < static_cast<int>(hosts.size()); ++i) {
      Task t;
      t.type = type;
      t.index = i;
      t.name = absl::StrCat(type, "-", i);
      tasks_.push_back(std::move(t));
    }
  }
  // Parameter servers first, so replicas find them listening.
  for (Task& t : tasks_)
    if (t.type == "ps") Start(t);
  for (Task& t : tasks_)
    if (t.type != "ps") Start(t);

  const std::string chief_type = cluster_.cluster.count("chief") ? "chief" : "worker";
  Task* chief = nullptr;
  for (Task& t : tasks_) {
    if (t.type == chief_type && t.index == 0) chief = &t;
    if (t.type == "evaluator") evaluator_ = &t;
  }
  int chief_code = -1;
  while (true) {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (Task& t : tasks_) {
        if (t.pid != pid || t.finished) continue;
        Reap(t, status);
        if (&t == chief) {
          // The chief's exit ends the run whatever its code: parameter servers never outlive it.
          if (chief_code < 0) chief_code = t.exit_code;
          BeginStop(absl::StrCat("the chief exited with code ", t.exit_code), t.exit_code == 0);
        } else if (!stopping_) {
          MaybeRestart(t);
        }
      }
    }
    const int sig = g_signal.load();
    if (sig != 0 && !stopping_) {
      chief_code = 128 + sig;
      BeginStop(absl::StrCat("the launcher received signal ", sig), false);
    }
    if (sparing_evaluator_ &&
        (sig != 0 || evaluator_->finished || absl::Now() >= final_eval_deadline_)) {
      EndFinalEvaluation();
    }
    bool all_done = true;
    for (Task& t : tasks_) all_done = all_done && t.finished;
    if (all_done) break;
    if (stopping_ && absl::Now() >= kill_at_) {
      LogWarning("tasks did not exit within the grace period; killing them",
                 {{"grace_seconds", absl::StrCat(absl::ToInt64Seconds(stop_grace_))}});
      Signal(SIGKILL);
      kill_at_ = absl::InfiniteFuture();
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  for (Task& t : tasks_) {
    for (std::thread& r : t.readers) r.join();
  }
  nlohmann::json summary = {{"event", "summary"},
                            {"exit_code", chief_code},
                            {"seconds", absl::ToDoubleSeconds(absl::Now() - start)}};
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    const nlohmann::json& source = !last_eval_.is_null() ? last_eval_ : chief_done_;
    summary["global_step"] = source.is_null()
                                 ? nlohmann::json(nullptr)
                                 : source.value("global_step", nlohmann::json(nullptr));
    // A classifier's accuracy, or a click-through model's AUC and log loss.
    if (!last_eval_.is_null() && last_eval_.contains("auc")) {
      summary["auc"] = last_eval_["auc"];
      summary["loss"] = last_eval_.value("log_loss", nlohmann::json(nullptr));
    } else {
      summary["accuracy"] = last_eval_.is_null() ? nlohmann::json(nullptr) : last_eval_["accuracy"];
      summary["loss"] = source.is_null() ? nlohmann::json(nullptr)
                                         : source.value("loss", nlohmann::json(nullptr));
    }
    if (evaluator_ != nullptr) {
      // Whether the accuracy above is the final checkpoint's (the chief's last step).
      summary["final_evaluated"] = !last_eval_.is_null() && !chief_done_.is_null() &&
                                   last_eval_.value("global_step", int64_t{-1}) >=
                                       chief_done_.value("global_step", int64_t{0});
    }
  }
  std::lock_guard<std::mutex> lock(g_out_mu);
  std::cout << summary.dump() << std::endl;
  return chief_code < 0 ? kExitFailure : chief_code;
}

}  // namespace

int RunLocalCluster(const std::vector<std::string>& args) {
  int64_t ps = 1, workers = 1, max_restarts = 10, final_eval_seconds = 60;
  bool chief = false, evaluator = false, tls = false;
  FlagSet flags(kUsage);
  flags.Int("ps", &ps, "Parameter servers.");
  flags.Int("workers", &workers, "Workers (besides the chief).");
  flags.Bool("chief", &chief, "Run a chief task (else worker 0 is the chief).");
  flags.Bool("evaluator", &evaluator, "Run an evaluator task.");
  flags.Bool("tls", &tls,
             "Mutual TLS between the tasks, as spec.tls: a CA made for this run and one "
             "certificate per task, in a fresh directory (printed on stderr).");
  flags.Int("max-restarts", &max_restarts, "Restarts allowed per task.");
  flags.Int("final-eval-seconds", &final_eval_seconds,
            "After the chief succeeds, how long the evaluator may take to evaluate the final "
            "checkpoint before it is stopped (the other tasks stop at once; 0: at once too).");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (!rest.ok()) {
    std::cerr << "disttrain-trainer local: " << rest.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (final_eval_seconds < 0) {
    std::cerr << "disttrain-trainer local: --final-eval-seconds must not be negative\n";
    return kExitUsage;
  }
  if (ps < 1 || workers < 0 || (workers == 0 && !chief)) {
    std::cerr << "disttrain-trainer local: need --ps >= 1 and a chief or at least one worker\n";
    return kExitUsage;
  }
  // Check the trainer flags once here, so a typo fails fast instead of in every task.
  TrainerOptions options;
  FlagSet trainer_flags("disttrain-trainer");
  RegisterFlags(&trainer_flags, &options);
  absl::StatusOr<std::vector<std::string>> positional = trainer_flags.Parse(*rest);
  absl::Status valid = positional.ok() ? ValidateOptions(options) : positional.status();
  if (valid.ok() && !positional->empty())
    valid = absl::InvalidArgumentError("unexpected argument " + positional->front());
  if (!valid.ok()) {
    std::cerr << "disttrain-trainer local: " << valid.message() << "\n";
    return kExitUsage;
  }

  std::vector<std::string> task_args = *rest;
  if (!trainer_flags.WasSet("model-dir")) {
    // A fresh directory per run: a shared default would make this run restore (or refuse)
    // another run's checkpoints.
    std::string dir = (std::filesystem::temp_directory_path() / "disttrain-local-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      std::cerr << "disttrain-trainer local: cannot create a model directory under "
                << std::filesystem::temp_directory_path() << ": " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
    task_args.push_back("--model-dir=" + dir);
    std::cerr << "disttrain-trainer local: checkpoints in " << dir
              << " (pass --model-dir to choose)\n";
  }

  const int total = static_cast<int>(ps + workers + (chief ? 1 : 0) + (evaluator ? 1 : 0));
  std::vector<int> ports = FreePorts(total);
  TfConfig cluster;
  size_t p = 0;
  auto hosts = [&](const char* type, int n) {
    for (int i = 0; i < n; ++i)
      cluster.cluster[type].push_back(absl::StrCat("127.0.0.1:", ports[p++]));
  };
  hosts("ps", static_cast<int>(ps));
  if (chief) hosts("chief", 1);
  if (workers > 0) hosts("worker", static_cast<int>(workers));
  if (evaluator) hosts("evaluator", 1);

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals] {
    int sig;
    sigwait(&signals, &sig);
    g_signal = sig;
  }).detach();

  // Many tasks share this host: /metrics only when asked for, on consecutive ports.
  std::string metrics_host;
  int metrics_port = -1;
  if (trainer_flags.WasSet("metrics-address") && options.metrics_address != "0") {
    const size_t colon = options.metrics_address.rfind(':');
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(options.metrics_address.substr(colon + 1), &metrics_port) ||
        metrics_port < 0 || metrics_port + total > 65535) {
      std::cerr << "disttrain-trainer local: --metrics-address must be [host]:port, the first of "
                << total << " consecutive ports (one per task), or [host]:0 for free ports\n";
      return kExitUsage;
    }
    metrics_host = options.metrics_address.substr(0, colon);
  }
  // ps 0 may hold the final checkpoint this long after SIGTERM: never killed before.
  const absl::Duration stop_grace =
      std::max(kStopGrace, absl::Seconds(options.final_snapshot_seconds + 5));
  if (tls && trainer_flags.WasSet("tls-dir")) {
    std::cerr << "disttrain-trainer local: --tls makes each task's certificates; drop --tls-dir\n";
    return kExitUsage;
  }
  std::string tls_base;
  if (tls) {
    absl::StatusOr<std::string> base = WriteLocalCertificates(cluster);
    if (!base.ok()) {
      std::cerr << "disttrain-trainer local: " << base.status().message() << "\n";
      return kExitFailure;
    }
    tls_base = *base;
    std::cerr << "disttrain-trainer local: mutual TLS, certificates in " << tls_base << "\n";
  }
  Launcher launcher(cluster, task_args, static_cast<int>(max_restarts), metrics_host, metrics_port,
                    absl::Seconds(final_eval_seconds), stop_grace);
  launcher.set_tls_base(tls_base);
  const int code = launcher.Run();
  std::error_code ignored;
  if (!tls_base.empty()) std::filesystem::remove_all(tls_base, ignored);  // keys die with the run
  return code;
}

}  // namespace disttrain::trainer
