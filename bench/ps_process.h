// A parameter server as users run it, for the benchmarks: a disttrain-trainer process in the ps
// role on a free loopback port, optionally pinned to one CPU, with its resident memory and CPU
// time read from /proc. Not thread-safe.
#ifndef DISTTRAIN_BENCH_PS_PROCESS_H_
#define DISTTRAIN_BENCH_PS_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace disttrain::bench {

class PsProcess {
 public:
  struct Options {
    int workers = 0;      // training replicas TF_CONFIG lists
    int partitions = 1;   // --ps-connections
    std::string tls_dir;  // --tls-dir (mutual TLS), or empty for plaintext
    int cpu = -1;         // the one CPU it may run on; -1: any
  };
  PsProcess(const std::string& trainer, const Options& options);
  ~PsProcess();
  PsProcess(const PsProcess&) = delete;
  PsProcess& operator=(const PsProcess&) = delete;

  std::string address() const;
  // Peak and current resident set in bytes.
  double PeakRss() const { return StatusBytes("VmHWM:"); }
  double Rss() const { return StatusBytes("VmRSS:"); }
  // CPU seconds (user + system) it has used so far.
  double CpuSeconds() const;

 private:
  double StatusBytes(const std::string& field) const;

  int port_;
  pid_t pid_;
};

}  // namespace disttrain::bench

#endif  // DISTTRAIN_BENCH_PS_PROCESS_H_
