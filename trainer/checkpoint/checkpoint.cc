#include "trainer/checkpoint/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;
constexpr char kMagic[8] = {'D', 'T', 'C', 'K', 'P', 'T', '0', '1'};

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
bool Get(const std::string& in, size_t* pos, T* v) {
  if (*pos + sizeof(T) > in.size()) return false;
  std::memcpy(v, in.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return true;
}

std::string FileName(int64_t step) { return absl::StrCat("ckpt-", step, ".bin"); }

}  // namespace

std::vector<int64_t> CheckpointSteps(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    int64_t step;
    if (name.rfind("ckpt-", 0) == 0 && name.size() > 9 && name.substr(name.size() - 4) == ".bin" &&
        absl::SimpleAtoi(name.substr(5, name.size() - 9), &step)) {
      steps.push_back(step);
    }
  }
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

absl::Status WriteCheckpoint(const std::string& dir, int64_t global_step,
                             const std::vector<VariableSpec>& variables, const Params& values,
                             int keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::string data(kMagic, sizeof(kMagic));
  Put<int64_t>(&data, global_step);
  Put<uint32_t>(&data, static_cast<uint32_t>(variables.size()));
  for (size_t i = 0; i < variables.size(); ++i) {
    Put<uint32_t>(&data, static_cast<uint32_t>(variables[i].name.size()));
    data += variables[i].name;
    Put<uint64_t>(&data, values[i].size());
    data.append(reinterpret_cast<const char*>(values[i].data()), values[i].size() * sizeof(float));
  }
  Put<uint32_t>(&data, static_cast<uint32_t>(
                           crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size())));
  const fs::path final_path = fs::path(dir) / FileName(global_step);
  const fs::path tmp = fs::path(dir) / absl::StrCat(".", FileName(global_step), ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp.string()));
  }
  fs::rename(tmp, final_path, ec);
  if (ec)
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp.string(), ": ", ec.message()));
  std::vector<int64_t> steps = CheckpointSteps(dir);
  for (size_t i = std::max(1, keep); i < steps.size(); ++i)
    fs::remove(fs::path(dir) / FileName(steps[i]), ec);
  return absl::OkStatus();
}

absl::StatusOr<Checkpoint> ReadCheckpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(path, " is corrupt: ", why));
  };
  if (data.size() < sizeof(kMagic) + 16 || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) {
    return corrupt("bad header");
  }
  uint32_t stored;
  std::memcpy(&stored, data.data() + data.size() - 4, 4);
  if (stored != crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size() - 4))
    return corrupt("checksum mismatch");
  Checkpoint c;
  c.path = path;
  size_t pos = sizeof(kMagic);
  uint32_t count;
  if (!Get(data, &pos, &c.global_step) || !Get(data, &pos, &count)) return corrupt("truncated");
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t name_len;
    uint64_t size;
    if (!Get(data, &pos, &name_len) || pos + name_len > data.size()) return corrupt("truncated");
    VariableSpec v{data.substr(pos, name_len), 0};
    pos += name_len;
    if (!Get(data, &pos, &size) || pos + size * sizeof(float) > data.size() - 4)
      return corrupt("truncated");
    v.size = size;
    std::vector<float> values(size);
    std::memcpy(values.data(), data.data() + pos, size * sizeof(float));
    pos += size * sizeof(float);
    c.variables.push_back(v);
    c.values.push_back(std::move(values));
  }
  return c;
}

absl::StatusOr<Checkpoint> LatestCheckpoint(const std::string& dir,
                                            std::vector<std::string>* skipped) {
  for (int64_t step : CheckpointSteps(dir)) {
    std::string path = (fs::path(dir) / FileName(step)).string();
    absl::StatusOr<Checkpoint> c = ReadCheckpoint(path);
    if (c.ok()) return c;
    if (skipped) skipped->push_back(std::string(c.status().message()));
  }
  return absl::NotFoundError(absl::StrCat("no intact checkpoint in ", dir));
}

}  // namespace disttrain::trainer
