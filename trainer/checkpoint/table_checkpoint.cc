#include "trainer/checkpoint/table_checkpoint.h"

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;
constexpr char kTableMagic[8] = {'D', 'T', 'T', 'B', 'L', '0', '0', '1'};
constexpr uint8_t kBlockRecord = 1, kEndRecord = 0;

std::string TableFileName(int64_t step) { return absl::StrCat("tables-", step, ".bin"); }

// A table file read front to back, its checksum computed as it goes.
class TableFileReader {
 public:
  explicit TableFileReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    std::error_code ec;
    size_ = fs::file_size(path, ec);
    if (ec) size_ = 0;
  }
  bool open() const { return static_cast<bool>(in_) && size_ >= sizeof(kTableMagic) + 21; }
  // Reads `n` bytes of the part the checksum covers.
  bool Read(void* out, size_t n) {
    if (pos_ + n > size_ - 4) return false;
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    if (!in_) return false;
    crc_ = static_cast<uint32_t>(crc32(crc_, static_cast<const Bytef*>(out), static_cast<uInt>(n)));
    pos_ += n;
    return true;
  }
  template <typename T>
  bool Get(T* v) {
    return Read(v, sizeof(T));
  }
  bool AtChecksum() const { return pos_ == size_ - 4; }
  bool ChecksumMatches() {
    uint32_t stored;
    in_.read(reinterpret_cast<char*>(&stored), 4);
    return in_ && stored == crc_;
  }
  absl::Status Corrupt(absl::string_view why) const {
    return absl::DataLossError(absl::StrCat(path_, " is corrupt: ", why));
  }

 private:
  std::string path_;
  std::ifstream in_;
  size_t size_ = 0, pos_ = 0;
  uint32_t crc_ = 0;
};

// Reads the file's header and blocks, calling `fn` (may be null: only checks); the checksum is
// checked at the end, so a caller that must not see a bad file's rows checks first.
absl::StatusOr<int64_t> WalkTableFile(const std::string& path, const TableRowsFn* fn) {
  if (!fs::exists(path)) return absl::NotFoundError(absl::StrCat(path, " is missing"));
  TableFileReader r(path);
  if (!r.open()) return r.Corrupt("too short");
  char magic[8];
  int64_t step, base;
  if (!r.Read(magic, 8) || std::memcmp(magic, kTableMagic, 8) != 0) return r.Corrupt("bad header");
  if (!r.Get(&step) || !r.Get(&base)) return r.Corrupt("truncated");
  std::string name;
  std::vector<uint64_t> ids;
  std::vector<float> rows;
  while (true) {
    uint8_t kind;
    if (!r.Get(&kind)) return r.Corrupt("truncated");
    if (kind == kEndRecord) break;
    if (kind != kBlockRecord) return r.Corrupt("bad record");
    uint32_t name_len, row_floats, count;
    if (!r.Get(&name_len) || name_len > 4096) return r.Corrupt("truncated");
    name.resize(name_len);
    if (!r.Read(name.data(), name_len) || !r.Get(&row_floats) || !r.Get(&count) ||
        row_floats == 0 || row_floats > (1u << 16))
      return r.Corrupt("truncated");
    ids.resize(count);
    rows.resize(static_cast<size_t>(count) * row_floats);
    if (!r.Read(ids.data(), ids.size() * 8) || !r.Read(rows.data(), rows.size() * sizeof(float)))
      return r.Corrupt("truncated");
    if (fn != nullptr) {
      if (absl::Status s = (*fn)(name, row_floats, ids, rows); !s.ok()) return s;
    }
  }
  if (!r.AtChecksum() || !r.ChecksumMatches()) return r.Corrupt("checksum mismatch");
  return base;
}

std::vector<int64_t> TableSteps(const std::string& dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    int64_t step;
    if (name.rfind("tables-", 0) == 0 && name.size() > 11 &&
        name.substr(name.size() - 4) == ".bin" &&
        absl::SimpleAtoi(name.substr(7, name.size() - 11), &step))
      steps.push_back(step);
  }
  return steps;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TableCheckpointWriter>> TableCheckpointWriter::Create(
    const std::string& dir, int64_t step, int64_t base) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::unique_ptr<TableCheckpointWriter> w(new TableCheckpointWriter());
  w->path_ = (fs::path(dir) / TableFileName(step)).string();
  w->tmp_ = (fs::path(dir) / absl::StrCat(".", TableFileName(step), ".tmp")).string();
  w->out_.open(w->tmp_, std::ios::binary | std::ios::trunc);
  if (!w->out_) return absl::UnavailableError(absl::StrCat("cannot write ", w->tmp_));
  w->Write(kTableMagic, sizeof(kTableMagic));
  w->Write(&step, sizeof(step));
  w->Write(&base, sizeof(base));
  return w;
}

TableCheckpointWriter::~TableCheckpointWriter() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void TableCheckpointWriter::Write(const void* data, size_t size) {
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  crc_ =
      static_cast<uint32_t>(crc32(crc_, static_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

absl::Status TableCheckpointWriter::Add(const std::string& table, uint32_t row_floats,
                                        absl::Span<const uint64_t> ids,
                                        absl::Span<const float> rows) {
  if (rows.size() != ids.size() * row_floats)
    return absl::InvalidArgumentError(absl::StrCat("table \"", table, "\": ", rows.size(),
                                                   " floats for ", ids.size(), " rows of ",
                                                   row_floats));
  if (ids.empty()) return absl::OkStatus();
  const uint8_t kind = kBlockRecord;
  const uint32_t name_len = static_cast<uint32_t>(table.size());
  const uint32_t count = static_cast<uint32_t>(ids.size());
  Write(&kind, 1);
  Write(&name_len, 4);
  Write(table.data(), table.size());
  Write(&row_floats, 4);
  Write(&count, 4);
  Write(ids.data(), ids.size() * 8);
  Write(rows.data(), rows.size() * sizeof(float));
  rows_ += ids.size();
  if (!out_) return absl::UnavailableError(absl::StrCat("cannot write ", tmp_));
  return absl::OkStatus();
}

absl::Status TableCheckpointWriter::Commit() {
  const uint8_t end = kEndRecord;
  Write(&end, 1);
  const uint32_t crc = crc_;
  out_.write(reinterpret_cast<const char*>(&crc), 4);
  out_.flush();
  out_.close();
  if (!out_) return absl::UnavailableError(absl::StrCat("cannot write ", tmp_));
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot rename ", tmp_, ": ", ec.message()));
  committed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CheckTableCheckpoint(const std::string& dir, int64_t step) {
  return WalkTableFile((fs::path(dir) / TableFileName(step)).string(), nullptr);
}

absl::Status ReadTableCheckpoint(const std::string& dir, int64_t step, TableRowsFn fn) {
  if (absl::StatusOr<int64_t> base = CheckTableCheckpoint(dir, step); !base.ok())
    return base.status();
  return WalkTableFile((fs::path(dir) / TableFileName(step)).string(), &fn).status();
}

absl::StatusOr<std::vector<int64_t>> TableCheckpointChain(const std::string& dir, int64_t step) {
  std::vector<int64_t> chain;
  for (int64_t s = step;;) {
    absl::StatusOr<int64_t> base = CheckTableCheckpoint(dir, s);
    if (!base.ok()) return base.status();
    chain.insert(chain.begin(), s);
    if (*base == kFullTableCheckpoint) return chain;
    if (*base >= s || chain.size() > 100000)
      return absl::DataLossError(absl::StrCat(TableFileName(s), " builds on step ", *base));
    s = *base;
  }
}

void PruneTableCheckpoints(const std::string& dir, const std::vector<int64_t>& kept) {
  // Follows the chains by the files' headers alone: pruning runs at every checkpoint and must
  // not read whole tables. A chain that breaks keeps what it has.
  std::set<int64_t> needed;
  for (int64_t k : kept) {
    for (int64_t s = k; needed.insert(s).second;) {
      std::ifstream in(fs::path(dir) / TableFileName(s), std::ios::binary);
      char magic[8];
      int64_t step, base;
      if (!in.read(magic, 8) || !in.read(reinterpret_cast<char*>(&step), 8) ||
          !in.read(reinterpret_cast<char*>(&base), 8) || base == kFullTableCheckpoint || base >= s)
        break;
      s = base;
    }
  }
  for (int64_t s : TableSteps(dir)) {
    if (needed.count(s)) continue;
    std::error_code ec;
    fs::remove(fs::path(dir) / TableFileName(s), ec);
  }
}

}  // namespace disttrain::trainer
