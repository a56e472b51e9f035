// `kubectl dtr logs JOB [-f]`: every pod's main container, each line prefixed "job.role.index |".
// A container restarted in place also shows the run before its restart, which the kubelet keeps
// (`kubectl logs --previous`), prefixed "job.role.index (previous) |": after a crash, those are
// the lines that explain it. Without -f the runs are merged in time order. With -f one stream
// per container run follows it, a previous run printed first: the list of pods is read every
// second, so new pods (recreated replicas) and restarted containers (a new restartCount) get
// their own stream, and a stream cut while its container still runs resumes after the last line
// printed. It ends once the job finished and every stream ended.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "operator/api/labels.h"
#include "operator/kube/errors.h"
#include "plugin/commands.h"
#include "plugin/job_view.h"
#include "plugin/log_lines.h"

namespace disttrain::plugin {
namespace {

std::string LogPath(const Target& t, const PodRow& pod, bool previous, bool follow,
                    std::optional<absl::Time> since) {
  std::string path = absl::StrCat("/api/v1/namespaces/", t.ns, "/pods/", pod.name,
                                  "/log?timestamps=true&container=", pod.container);
  if (previous) absl::StrAppend(&path, "&previous=true");
  if (follow) absl::StrAppend(&path, "&follow=true");
  if (since) {
    absl::StrAppend(
        &path, "&sinceTime=", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *since, absl::UTCTimeZone()));
  }
  return path;
}

std::vector<PodRow> Selected(std::vector<PodRow> rows, const LogsOptions& o) {
  if (o.role.empty()) return rows;
  std::vector<PodRow> out;
  for (PodRow& r : rows) {
    if (r.role == o.role) out.push_back(std::move(r));
  }
  return out;
}

// One run's whole log.
absl::StatusOr<PodLog> ReadRun(const Target& t, const PodRow& pod, bool previous) {
  absl::StatusOr<std::string> text = t.client->GetText(
      LogPath(t, pod, previous, false, std::nullopt),
      absl::StrCat("read the ", previous ? "previous run's " : "", "logs of pod ", pod.name));
  if (!text.ok()) return text.status();
  PodLog log{pod.prefix, {}, previous};
  for (absl::string_view l : absl::StrSplit(*text, '\n', absl::SkipEmpty()))
    log.lines.push_back(ParseLogLine(std::string(l)));
  return log;
}

bool Finished(const nlohmann::json& job) {
  const std::string state = job.value("/status/state"_json_pointer, "");
  return state == "Succeeded" || state == "Failed";
}

// Everything one `logs -f` follows. Thread-safe.
class Follower {
 public:
  Follower(const Target& t, const LogsOptions& o, std::ostream& out) : t_(t), o_(o), out_(out) {}
  ~Follower() {
    for (auto& [key, s] : streams_) {
      if (std::shared_ptr<kube::LineStream> live = s->live.lock()) live->Cancel();
      s->thread.join();
    }
  }

  // Starts a stream for each container run that has logs and none yet, or resumes one that was
  // cut while its container still runs.
  void Update(const std::vector<PodRow>& rows) {
    for (const PodRow& r : rows)
      width_ = std::max(width_, RunPrefix(r.prefix, r.previous_run).size());
    for (const PodRow& r : rows) {
      if (!r.container_started) continue;
      const std::string key = absl::StrCat(r.uid, "/", r.restarts);
      auto it = streams_.find(key);
      if (it == streams_.end()) {
        // The run before this one, unless it was followed while it ran.
        const bool previous =
            r.previous_run && !streams_.contains(absl::StrCat(r.uid, "/", r.restarts - 1));
        Start(key, r, std::nullopt, previous);
      } else if (it->second->done && it->second->cut && r.state == "Running") {
        std::optional<absl::Time> since = it->second->last;
        it->second->thread.join();
        streams_.erase(it);
        Start(key, r, since, false);
      }
    }
  }

  bool AllDone() const {
    for (const auto& [key, s] : streams_) {
      if (!s->done) return false;
    }
    return true;
  }

 private:
  struct Stream {
    std::thread thread;
    std::weak_ptr<kube::LineStream> live;
    std::atomic<bool> done{false};
    std::atomic<bool> cut{false};    // ended by an error, not by its container's end
    std::optional<absl::Time> last;  // of the last line printed (read after done)
  };

  // Follows one run from `since`; with `previous`, prints the run before it first (a previous
  // run that cannot be read is skipped: the current one is still worth following).
  void Start(const std::string& key, const PodRow& pod, std::optional<absl::Time> since,
             bool previous) {
    auto s = std::make_unique<Stream>();
    Stream* stream = s.get();
    const size_t width = width_;
    stream->last = since;
    s->thread = std::thread([this, stream, pod, since, width, previous] {
      if (previous) {
        if (absl::StatusOr<PodLog> log = ReadRun(t_, pod, true); log.ok()) {
          const std::string prefix = RunPrefix(pod.prefix, true);
          for (const LogLine& line : log->lines)
            Print(FormatLogLine(prefix, width, line, o_.timestamps));
        }
      }
      absl::StatusOr<std::unique_ptr<kube::LineStream>> opened =
          t_.client->StreamLines(LogPath(t_, pod, false, true, since),
                                 absl::StrCat("follow the logs of pod ", pod.name), absl::Hours(1));
      if (!opened.ok()) {
        stream->cut = true;
        stream->done = true;
        return;
      }
      std::shared_ptr<kube::LineStream> live = *std::move(opened);
      stream->live = live;
      std::string raw;
      while (live->Next(&raw)) {
        LogLine line = ParseLogLine(raw);
        // A resumed stream starts at the second of the last line: skip what was printed.
        if (since && line.time && *line.time <= *since) continue;
        if (line.time) stream->last = line.time;
        Print(FormatLogLine(pod.prefix, width, line, o_.timestamps));
      }
      stream->cut = !live->status().ok();
      stream->done = true;
    });
    streams_[key] = std::move(s);
  }

  void Print(const std::string& line) {
    std::lock_guard<std::mutex> lock(out_mu_);
    out_ << line << "\n" << std::flush;
  }

  const Target& t_;
  const LogsOptions& o_;
  std::ostream& out_;
  std::mutex out_mu_;
  size_t width_ = 0;
  std::map<std::string, std::unique_ptr<Stream>> streams_;  // by pod uid / restart count
};

}  // namespace

int RunLogs(const Target& t, const LogsOptions& o, std::ostream& out, std::ostream& err) {
  nlohmann::json job;
  std::vector<nlohmann::json> pods;
  if (!ReadJob(t, &job, &pods, err)) return 1;
  if (!o.follow) {
    std::vector<PodLog> logs;
    int code = 0;
    for (const PodRow& pod : Selected(ReadPods(t.job, pods, *t.kind), o)) {
      if (!pod.container_started) continue;
      for (bool previous : {true, false}) {
        if (previous && !pod.previous_run) continue;
        absl::StatusOr<PodLog> log = ReadRun(t, pod, previous);
        if (log.ok()) {
          logs.push_back(*std::move(log));
        } else if (!kube::IsNotFound(log.status())) {  // NotFound: deleted since the list
          err << ExplainError(log.status(), t);
          code = 1;  // the other runs' logs are still worth printing
        }
      }
    }
    for (const std::string& line : MergeLogs(logs, o.timestamps)) out << line << "\n";
    return code;
  }
  Follower follower(t, o, out);
  while (true) {
    follower.Update(Selected(ReadPods(t.job, pods, *t.kind), o));
    const bool finished = Finished(job);
    if (finished && follower.AllDone()) return 0;
    absl::SleepFor(absl::Seconds(1));
    if (!ReadJob(t, &job, &pods, err)) return 1;
  }
}

}  // namespace disttrain::plugin
