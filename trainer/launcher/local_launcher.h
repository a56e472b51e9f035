// `disttrain-trainer local`: a whole cluster on this machine, as the operator would run it on
// Kubernetes. Free loopback ports, one TF_CONFIG per task, output prefixed with the task name,
// tasks restarted as the operator would (parameter servers always; others on a retryable exit
// code >= 128), and as the last stdout line a JSON summary. When the chief exits, whatever its
// code, every other task gets SIGTERM (SIGKILL after 10 s) and nothing restarts; SIGTERM or
// SIGINT to the launcher does the same. Without --model-dir each run gets a fresh directory
// (printed on stderr), so unrelated runs never share checkpoints. Returns the chief's exit code,
// or 128 + the signal that stopped the launcher.
#ifndef DISTTRAIN_TRAINER_LAUNCHER_LOCAL_LAUNCHER_H_
#define DISTTRAIN_TRAINER_LAUNCHER_LOCAL_LAUNCHER_H_

#include <string>
#include <vector>

namespace disttrain::trainer {

int RunLocalCluster(const std::vector<std::string>& args);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_LAUNCHER_LOCAL_LAUNCHER_H_
