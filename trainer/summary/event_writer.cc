#include "trainer/summary/event_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tensorboard/event.pb.h"
#include "trainer/summary/crc32c.h"

namespace disttrain::trainer {
namespace {

void AppendLittleEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

double Seconds(absl::Time t) { return absl::ToUnixMicros(t) / 1e6; }

}  // namespace

std::string TfRecord(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  AppendLittleEndian(data.size(), 8, &out);
  AppendLittleEndian(MaskCrc(Crc32c(out.data(), 8)), 4, &out);
  out += data;
  AppendLittleEndian(MaskCrc(Crc32c(data.data(), data.size())), 4, &out);
  return out;
}

absl::StatusOr<std::unique_ptr<EventWriter>> EventWriter::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("create ", dir, ": ", ec.message()));
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  const absl::Time now = absl::Now();
  const std::string path = absl::StrCat(dir, "/events.out.tfevents.", absl::ToUnixSeconds(now), ".",
                                        host, ".", getpid());
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (file == nullptr)
    return absl::UnavailableError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  std::unique_ptr<EventWriter> writer(new EventWriter(path, file));
  tensorboard::Event version;
  version.set_wall_time(Seconds(now));
  version.set_file_version("brain.Event:2");
  if (absl::Status s = writer->WriteRecord(version.SerializeAsString()); !s.ok()) return s;
  return writer;
}

EventWriter::~EventWriter() { std::fclose(file_); }

absl::Status EventWriter::WriteScalars(int64_t step,
                                       const std::vector<std::pair<std::string, float>>& values,
                                       absl::Time wall_time) {
  tensorboard::Event event;
  event.set_wall_time(Seconds(wall_time));
  event.set_step(step);
  for (const auto& [tag, value] : values) {
    tensorboard::SummaryValue* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(value);
  }
  return WriteRecord(event.SerializeAsString());
}

absl::Status EventWriter::WriteRecord(const std::string& data) {
  const std::string record = TfRecord(data);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return absl::UnavailableError(absl::StrCat("write ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace disttrain::trainer
