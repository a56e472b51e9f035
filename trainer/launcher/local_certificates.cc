#include "trainer/launcher/local_certificates.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/certificates.h"

namespace disttrain::trainer {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok) return absl::InternalError(absl::StrCat("writing ", path));
  return absl::OkStatus();
}

}  // namespace

std::string LocalTlsDir(const std::string& base, const std::string& type, int index) {
  return absl::StrCat(base, "/", type, "-", index);
}

absl::StatusOr<std::string> WriteLocalCertificates(const TfConfig& cluster) {
  std::string base =
      (std::filesystem::temp_directory_path() / "disttrain-local-tls-XXXXXX").string();
  if (mkdtemp(base.data()) == nullptr)
    return absl::InternalError(absl::StrCat("cannot create ", base, ": ", std::strerror(errno)));
  const absl::Time now = absl::Now();
  const absl::Time from = now - absl::Hours(1), to = now + absl::Hours(24 * 30);
  absl::StatusOr<KeyAndCertificate> ca = MakeCertificateAuthority("disttrain local", from, to);
  if (!ca.ok()) return ca.status();
  for (const auto& [type, hosts] : cluster.cluster) {
    for (int i = 0; i < static_cast<int>(hosts.size()); ++i) {
      const std::string dir = LocalTlsDir(base, type, i);
      if (mkdir(dir.c_str(), 0700) != 0)
        return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
      absl::StatusOr<KeyAndCertificate> task =
          IssueCertificate(*ca, {absl::StrCat(type, "-", i), {"127.0.0.1", "localhost"}, from, to});
      if (!task.ok()) return task.status();
      for (auto [name, text, mode] : {std::tuple{"ca.crt", &ca->certificate_pem, 0644},
                                      {"tls.crt", &task->certificate_pem, 0644},
                                      {"tls.key", &task->key_pem, 0600}}) {
        if (absl::Status s = WriteFile(absl::StrCat(dir, "/", name), *text, mode); !s.ok())
          return s;
      }
    }
  }
  return base;  // the CA's key is not kept: no further certificate can join this run
}

}  // namespace disttrain::trainer
