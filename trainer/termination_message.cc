#include "trainer/termination_message.h"

#include <filesystem>
#include <fstream>

#include "common/log.h"

namespace disttrain::trainer {

void WriteTerminationMessage(const std::string& path, const nlohmann::json& result) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return;
  std::ofstream out(path, std::ios::trunc);
  out << result.dump() << "\n";
  out.flush();
  if (!out) LogWarning("cannot write the termination message", {{"path", path}});
}

}  // namespace disttrain::trainer
