#include "trainer/data/tfrecord_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "trainer/summary/crc32c.h"

namespace disttrain::trainer {
namespace {

uint64_t LittleEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t LittleEndian32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void PutLittleEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Records larger than this are taken for a corrupt length rather than allocated.
constexpr uint64_t kMaxRecordBytes = uint64_t{256} << 20;

}  // namespace

std::string FrameTfRecord(const std::string& data) {
  std::string out;
  PutLittleEndian(&out, data.size(), 8);
  PutLittleEndian(&out, MaskCrc(Crc32c(out.data(), 8)), 4);
  out += data;
  PutLittleEndian(&out, MaskCrc(Crc32c(data.data(), data.size())), 4);
  return out;
}

absl::StatusOr<std::unique_ptr<TfRecordFile>> TfRecordFile::Open(const std::string& path) {
  std::unique_ptr<TfRecordFile> f(new TfRecordFile());
  f->path_ = path;
  f->file_ = std::fopen(path.c_str(), "rb");
  if (f->file_ == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  return f;
}

TfRecordFile::~TfRecordFile() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::StatusOr<bool> TfRecordFile::Next() {
  char header[12];
  const size_t got = std::fread(header, 1, sizeof(header), file_);
  if (got == 0) return false;
  ++record_;
  can_continue_ = false;
  if (got != sizeof(header))
    return absl::DataLossError(absl::StrCat(Where(), ": truncated record header"));
  const uint64_t length = LittleEndian64(header);
  if (MaskCrc(Crc32c(header, 8)) != LittleEndian32(header + 8))
    return absl::DataLossError(absl::StrCat(Where(), ": the length's CRC does not match"));
  if (length > kMaxRecordBytes)
    return absl::DataLossError(absl::StrCat(Where(), ": a record of ", length, " bytes"));
  data_.resize(length);
  char crc[4];
  if (std::fread(data_.data(), 1, length, file_) != length || std::fread(crc, 1, 4, file_) != 4)
    return absl::DataLossError(absl::StrCat(Where(), ": truncated record"));
  can_continue_ = true;
  if (MaskCrc(Crc32c(data_.data(), data_.size())) != LittleEndian32(crc))
    return absl::DataLossError(absl::StrCat(Where(), ": the data's CRC does not match"));
  if (!example_.ParseFromString(data_))
    return absl::InvalidArgumentError(absl::StrCat(Where(), ": not a tf.Example"));
  return true;
}

absl::Status TfRecordFile::Values(const std::string& name, const std::string&,
                                  std::vector<absl::string_view>* out) const {
  out->clear();
  scratch_.clear();
  const auto& features = example_.features().feature();
  auto it = features.find(name);
  if (it == features.end()) return absl::NotFoundError("no such feature in the tf.Example");
  const disttrain::tensorflow::Feature& f = it->second;
  switch (f.kind_case()) {
    case disttrain::tensorflow::Feature::kBytesList:
      for (const std::string& v : f.bytes_list().value()) out->push_back(v);
      break;
    case disttrain::tensorflow::Feature::kInt64List:
      for (int64_t v : f.int64_list().value())
        out->push_back(scratch_.emplace_back(absl::StrCat(v)));
      break;
    case disttrain::tensorflow::Feature::kFloatList:
      for (float v : f.float_list().value())
        out->push_back(scratch_.emplace_back(absl::StrFormat("%.9g", v)));
      break;
    case disttrain::tensorflow::Feature::KIND_NOT_SET:
      break;
  }
  return absl::OkStatus();
}

std::string TfRecordFile::Where() const { return absl::StrCat(path_, ": record ", record_); }

}  // namespace disttrain::trainer
