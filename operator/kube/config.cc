#include "operator/kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace disttrain::kube {
namespace {

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", what, " ", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Finds the entry `name` in a kubeconfig list ("clusters", "users", "contexts").
absl::StatusOr<YAML::Node> Named(const YAML::Node& root, const char* list, const std::string& name,
                                 const char* field) {
  const YAML::Node items = root[list];
  if (items && items.IsSequence()) {
    for (const YAML::Node& item : items) {
      if (item["name"] && item["name"].as<std::string>() == name && item[field]) return item[field];
    }
  }
  return absl::NotFoundError(absl::StrCat("no ", field, " named \"", name, "\" in ", list));
}

// Reads inline base64 data (`<key>-data`) or a file (`<key>`), relative to `dir`.
absl::StatusOr<std::string> DataOrFile(const YAML::Node& node, const std::string& key,
                                       const std::filesystem::path& dir) {
  if (node[key + "-data"]) {
    std::string decoded;
    if (!absl::Base64Unescape(node[key + "-data"].as<std::string>(), &decoded)) {
      return absl::InvalidArgumentError(absl::StrCat(key, "-data is not valid base64"));
    }
    return decoded;
  }
  if (node[key]) {
    std::filesystem::path p = node[key].as<std::string>();
    if (p.is_relative()) p = dir / p;
    return ReadFile(p, key);
  }
  return std::string();
}

}  // namespace

absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto fail = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", path, ": ", why));
  };
  absl::StatusOr<std::string> text = ReadFile(path, "kubeconfig");
  if (!text.ok()) return text.status();
  try {
    YAML::Node root = YAML::Load(*text);
    if (!root.IsMap()) return fail("not a kubeconfig (expected a YAML map)");
    std::string ctx_name = context;
    if (ctx_name.empty() && root["current-context"]) {
      ctx_name = root["current-context"].as<std::string>();
    }
    if (ctx_name.empty()) return fail("no context given and no current-context set");
    absl::StatusOr<YAML::Node> ctx = Named(root, "contexts", ctx_name, "context");
    if (!ctx.ok()) return fail(ctx.status().message());
    if (!(*ctx)["cluster"])
      return fail(absl::StrCat("context \"", ctx_name, "\" names no cluster"));
    absl::StatusOr<YAML::Node> cluster =
        Named(root, "clusters", (*ctx)["cluster"].as<std::string>(), "cluster");
    if (!cluster.ok()) return fail(cluster.status().message());

    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    RestConfig config;
    if (!(*cluster)["server"]) return fail("the cluster has no server");
    config.server = (*cluster)["server"].as<std::string>();
    if (config.server.rfind("https://", 0) != 0) {
      return fail(absl::StrCat("server ", config.server,
                               " is not https:// (disttrain always verifies TLS)"));
    }
    if ((*cluster)["insecure-skip-tls-verify"] &&
        (*cluster)["insecure-skip-tls-verify"].as<bool>()) {
      return fail(
          "insecure-skip-tls-verify is set; disttrain always verifies TLS, give the CA instead");
    }
    absl::StatusOr<std::string> ca = DataOrFile(*cluster, "certificate-authority", dir);
    if (!ca.ok()) return fail(ca.status().message());
    config.ca_pem = *ca;
    if ((*ctx)["namespace"]) config.namespace_name = (*ctx)["namespace"].as<std::string>();

    if ((*ctx)["user"]) {
      absl::StatusOr<YAML::Node> user =
          Named(root, "users", (*ctx)["user"].as<std::string>(), "user");
      if (!user.ok()) return fail(user.status().message());
      absl::StatusOr<std::string> cert = DataOrFile(*user, "client-certificate", dir);
      absl::StatusOr<std::string> key = DataOrFile(*user, "client-key", dir);
      if (!cert.ok()) return fail(cert.status().message());
      if (!key.ok()) return fail(key.status().message());
      if (cert->empty() != key->empty()) {
        return fail("client-certificate and client-key must be given together");
      }
      config.client_cert_pem = *cert;
      config.client_key_pem = *key;
      if ((*user)["token"]) {
        config.bearer_token = (*user)["token"].as<std::string>();
      } else if ((*user)["tokenFile"]) {
        absl::StatusOr<std::string> token =
            ReadFile((*user)["tokenFile"].as<std::string>(), "tokenFile");
        if (!token.ok()) return fail(token.status().message());
        config.bearer_token = *token;
      }
      if ((*user)["exec"] || (*user)["auth-provider"]) {
        if (config.bearer_token.empty() && config.client_cert_pem.empty()) {
          return fail(
              "exec and auth-provider credentials are not supported; use a token or a client "
              "certificate");
        }
      }
    }
    while (!config.bearer_token.empty() &&
           (config.bearer_token.back() == '\n' || config.bearer_token.back() == '\r')) {
      config.bearer_token.pop_back();
    }
    return config;
  } catch (const YAML::Exception& e) {
    return fail(absl::StrCat("invalid YAML: ", e.what()));
  }
}

absl::StatusOr<RestConfig> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return absl::FailedPreconditionError(
        "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); pass --kubeconfig");
  }
  RestConfig config;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = absl::StrCat("[", h, "]");  // IPv6
  config.server = absl::StrCat("https://", h, ":", port);
  absl::StatusOr<std::string> token =
      ReadFile(std::filesystem::path(sa_dir) / "token", "service account token");
  if (!token.ok()) return token.status();
  config.bearer_token = *token;
  absl::StatusOr<std::string> ca =
      ReadFile(std::filesystem::path(sa_dir) / "ca.crt", "service account CA");
  if (!ca.ok()) return ca.status();
  config.ca_pem = *ca;
  if (absl::StatusOr<std::string> ns =
          ReadFile(std::filesystem::path(sa_dir) / "namespace", "namespace");
      ns.ok()) {
    config.namespace_name = *ns;
  }
  return config;
}

absl::StatusOr<RestConfig> LoadConfig(const std::string& kubeconfig_flag,
                                      const std::string& context) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig(kubeconfig_flag, context);
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::string first = env;
    first = first.substr(0, first.find(':'));
    return LoadKubeconfig(first, context);
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) return InClusterConfig();
  if (const char* home = std::getenv("HOME")) {
    std::string path = absl::StrCat(home, "/.kube/config");
    if (std::filesystem::exists(path)) return LoadKubeconfig(path, context);
  }
  return absl::FailedPreconditionError(
      "no cluster configuration: pass --kubeconfig, set KUBECONFIG, or run in a pod");
}

}  // namespace disttrain::kube
