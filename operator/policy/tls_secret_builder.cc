#include "operator/policy/tls_secret_builder.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/certificates.h"
#include "operator/api/names.h"
#include "operator/policy/child_meta.h"

namespace disttrain::policy {

using nlohmann::json;

std::string TlsSecretName(const api::DistributedTraining& job) {
  if (job.metadata.uid.empty()) return absl::StrCat(job.metadata.name, "-tls");
  return absl::StrCat(job.metadata.name, "-tls-", job.metadata.uid.substr(0, 8));
}

std::string TlsTaskKey(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  return absl::StrCat(api::RoleName(job.spec, type), "-", index);
}

std::vector<std::string> TaskNames(const api::DistributedTraining& job, api::ReplicaType type,
                                   int index, const BuildOptions& options) {
  const std::string pod = api::ReplicaName(job, type, index);
  const std::string host = api::ReplicaHost(job, type, index);  // <pod>[.<job>].<ns>
  const std::string domain =
      options.cluster_domain.empty() ? "cluster.local" : options.cluster_domain;
  std::vector<std::string> names = {pod};
  if (api::UsesJobService(job)) names.push_back(absl::StrCat(pod, ".", job.metadata.name));
  names.insert(names.end(),
               {host, absl::StrCat(host, ".svc"), absl::StrCat(host, ".svc.", domain)});
  return names;
}

absl::StatusOr<json> BuildTlsSecret(const api::DistributedTraining& job,
                                    const BuildOptions& options, absl::Time now) {
  const absl::Time from = now - absl::Hours(1), to = now + kTlsValidity;
  absl::StatusOr<KeyAndCertificate> ca = MakeCertificateAuthority(
      absl::StrCat(job.metadata.namespace_name, "/", job.metadata.name, " CA"), from, to);
  if (!ca.ok()) return ca.status();
  json data = {{"ca.crt", absl::Base64Escape(ca->certificate_pem)}};
  for (const auto& [type, spec] : job.spec.replica_specs) {
    for (int i = 0; i < spec.replicas; ++i) {
      absl::StatusOr<KeyAndCertificate> task = IssueCertificate(
          *ca, {api::ReplicaName(job, type, i), TaskNames(job, type, i, options), from, to});
      if (!task.ok()) return task.status();
      const std::string key = TlsTaskKey(job, type, i);
      data[key + ".crt"] = absl::Base64Escape(task->certificate_pem);
      data[key + ".key"] = absl::Base64Escape(task->key_pem);
    }
  }
  const api::ChildLabels& l = job.kind->labels;
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"type", "Opaque"},
              {"metadata",
               {{"name", TlsSecretName(job)},
                {"namespace", job.metadata.namespace_name},
                {"labels", {{l.job_name, job.metadata.name}, {l.owner_key, l.owner_value}}},
                {"ownerReferences", json::array({OwnerReference(job)})}}},
              {"data", std::move(data)}};
}

json TlsVolume(const api::DistributedTraining& job, api::ReplicaType type, int index,
               const json& pod_spec) {
  const bool has_fs_group = pod_spec.contains("securityContext") &&
                            pod_spec["securityContext"].is_object() &&
                            pod_spec["securityContext"].contains("fsGroup");
  const std::string key = TlsTaskKey(job, type, index);
  return {{"name", kTlsVolume},
          {"secret",
           {{"secretName", TlsSecretName(job)},
            {"defaultMode", has_fs_group ? 0440 : 0444},
            {"items", json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}},
                                   {{"key", key + ".crt"}, {"path", "tls.crt"}},
                                   {{"key", key + ".key"}, {"path", "tls.key"}}})}}}};
}

}  // namespace disttrain::policy
