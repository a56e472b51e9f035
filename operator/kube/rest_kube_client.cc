#include "operator/kube/rest_kube_client.h"

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <atomic>
#include <boost/asio/ssl.hpp>
#include <cstdint>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "operator/kube/errors.h"
#include "operator/kube/internal/rest_streams.h"
#include "operator/kube/protobuf.h"
#include "operator/kube/rest_http.h"
#include "operator/kube/tls.h"

namespace disttrain::kube {
namespace {

using nlohmann::json;
namespace http = web::http;

constexpr int kMaxAttempts = 5;

std::string Describe(const Resource& r, const std::string& ns, const std::string& name) {
  return absl::StrCat(r.plural, " ", ns.empty() ? "" : absl::StrCat(ns, "/"), name);
}

}  // namespace

std::string ListQuery(const ListOptions& o, bool watch) {
  std::string q;
  auto add = [&](absl::string_view k, const std::string& v) {
    absl::StrAppend(&q, q.empty() ? "?" : "&", k, "=", web::uri::encode_data_string(v));
  };
  if (watch) add("watch", "true");
  if (!o.label_selector.empty()) add("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) add("fieldSelector", o.field_selector);
  if (!o.resource_version.empty()) add("resourceVersion", o.resource_version);
  if (o.limit > 0) add("limit", absl::StrCat(o.limit));
  if (!o.continue_token.empty()) add("continue", o.continue_token);
  if (watch && o.allow_bookmarks) add("allowWatchBookmarks", "true");
  if (o.timeout_seconds > 0) add("timeoutSeconds", absl::StrCat(o.timeout_seconds));
  return q;
}

absl::StatusOr<std::unique_ptr<RestKubeClient>> RestKubeClient::Create(const RestConfig& config) {
  // No OpenSSL cleanup at exit: cpprestsdk's asio threads outlive main and may still free a
  // TLS connection (one abandoned to a timeout) after an atexit cleanup, which crashed at exit.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  if (config.server.rfind("https://", 0) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("server ", config.server, " is not https://"));
  }
  absl::StatusOr<std::shared_ptr<const TlsMaterial>> tls =
      TlsMaterial::Parse(config.ca_pem, config.client_cert_pem, config.client_key_pem);
  if (!tls.ok()) return tls.status();
  if ((*tls)->has_ca()) {
    // With a CA given, only that CA is trusted (as client-go does): TlsMaterial::ApplyTo
    // replaces each connection's trust store. cpprestsdk fills that store from OpenSSL's default
    // locations first, before our callback runs (parsing the system bundle: ~30 ms of CPU and
    // ~0.75 MB per new connection, all thrown away); pointing the defaults at nothing skips it.
    setenv("SSL_CERT_FILE", "/dev/null", 1);
    setenv("SSL_CERT_DIR", "/dev/null", 1);
  }
  return std::unique_ptr<RestKubeClient>(new RestKubeClient(config, *std::move(tls)));
}

RestKubeClient::RestKubeClient(RestConfig config, std::shared_ptr<const TlsMaterial> tls)
    : config_(std::move(config)),
      tls_(std::move(tls)),
      limiter_(config_.qps, config_.burst),
      in_flight_(config_.max_in_flight) {
  ResetClient();
}

RestKubeClient::~RestKubeClient() = default;

std::shared_ptr<http::client::http_client> RestKubeClient::client() {
  absl::MutexLock lock(&mu_);
  return client_;
}

void RestKubeClient::ResetClient() {
  auto c = std::make_shared<http::client::http_client>(
      config_.server, MakeClientConfig(tls_, config_.attempt_timeout));
  absl::MutexLock lock(&mu_);
  client_ = std::move(c);
}

absl::StatusOr<json> RestKubeClient::Do(const std::string& method,
                                        const std::string& path_and_query,
                                        const std::optional<json>& body,
                                        const std::string& content_type,
                                        const std::string& context) {
  absl::StatusOr<std::string> text = DoText(
      {method, path_and_query, body ? std::optional<std::string>(body->dump()) : std::nullopt,
       content_type, context});
  if (!text.ok()) return text.status();
  if (text->empty()) return json::object();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError(absl::StrCat(context, ": response is not JSON"));
  return j;
}

absl::StatusOr<std::string> RestKubeClient::DoText(const Prepared& request, bool* protobuf) {
  const std::string& method = request.method;
  const std::string& context = request.context;
  absl::Duration backoff = absl::Milliseconds(200);
  absl::Status last;
  const absl::Time deadline = absl::Now() + config_.request_timeout;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    // Deletes skip the client-side limit: they release pods (and their GPUs) and must not queue
    // behind a backlog of creates; the API server's priority and fairness still bounds them.
    if (method != "DELETE") limiter_.Wait();
    http::http_request req = MakeRequest(config_, method, request.path_and_query, request.accept);
    if (request.body) SetBody(req, *request.body, request.content_type);
    std::optional<absl::Duration> retry_after;
    in_flight_.Acquire();  // released once the answer is read, before any backoff
    bool held = true;
    auto release = [&] {
      if (held) in_flight_.Release();
      held = false;
    };
    try {
      http::http_response resp = client()->request(req).get();
      const bool proto = IsProtobuf(resp);
      std::string text = ReadBody(resp, proto);
      release();
      const int code = resp.status_code();
      Observe(method, code);
      if (code >= 200 && code < 300) {
        if (protobuf != nullptr) *protobuf = proto;
        return text;
      }
      last = StatusFromHttp(code, ErrorBody(std::move(text), proto), context);
      if (auto it = resp.headers().find("Retry-After"); it != resp.headers().end()) {
        retry_after = ParseRetryAfter(it->second);
      }
    } catch (const std::exception& e) {
      release();
      Observe(method, 0);
      last = absl::UnavailableError(absl::StrCat(context, ": ", e.what()));
      ResetClient();  // cpprestsdk clients are not reliable after a transport failure
    }
    if (!IsRetryable(last) || attempt == kMaxAttempts) return last;
    absl::Duration wait = retry_after ? std::max(*retry_after, backoff) : backoff;
    // The whole call has a deadline: an attempt stalls at most attempt_timeout, and no attempt
    // starts that could not finish before the deadline.
    if (absl::Now() + wait + config_.attempt_timeout > deadline) {
      return absl::Status(
          last.code(),
          absl::StrCat(last.message(), " (gave up after ", attempt, " attempts within ",
                       absl::FormatDuration(config_.request_timeout), ")"));
    }
    LogDebug("retrying request", {{"request", context},
                                  {"attempt", absl::StrCat(attempt)},
                                  {"wait", absl::FormatDuration(wait)},
                                  {"error", last.ToString()}});
    absl::SleepFor(wait);
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
  return last;
}

absl::StatusOr<json> RestKubeClient::Get(const Resource& r, const std::string& ns,
                                         const std::string& name) {
  return Do("GET", r.Path(ns, name), std::nullopt, "", absl::StrCat("get ", Describe(r, ns, name)));
}

absl::StatusOr<ListResult> RestKubeClient::List(const Resource& r, const std::string& ns,
                                                const ListOptions& options) {
  const std::string context = absl::StrCat("list ", Describe(r, ns, ""));
  if (options.decoder) {
    bool protobuf = false;
    absl::StatusOr<std::string> text = DoText(
        {"GET", r.Path(ns) + ListQuery(options, false), std::nullopt, "", context, kAcceptProtobuf},
        &protobuf);
    if (!text.ok()) return text.status();
    if (protobuf) return DecodeList(*text, options.decoder, context);
    return ParseList(*text, context);
  }
  return ParseList(
      DoText({"GET", r.Path(ns) + ListQuery(options, false), std::nullopt, "", context}), context);
}

absl::StatusOr<ListResult> RestKubeClient::ParseList(absl::StatusOr<std::string> text,
                                                     const std::string& context) {
  if (!text.ok()) return text.status();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::DataLossError(absl::StrCat(context, ": response is not JSON"));
  ListResult out;
  if (j.contains("items") && j["items"].is_array()) {
    for (json& item : j["items"]) out.items.push_back(std::move(item));
  }
  const json& meta = j.value("metadata", json::object());
  out.resource_version = meta.value("resourceVersion", "");
  out.continue_token = meta.value("continue", "");
  return out;
}

absl::StatusOr<ListResult> RestKubeClient::DecodeList(const std::string& body,
                                                      const ObjectDecoder& decoder,
                                                      const std::string& context) {
  absl::StatusOr<ProtoObject> envelope = ParseProtoObject(body);
  absl::StatusOr<ProtoList> list =
      envelope.ok() ? ParseProtoList(envelope->raw) : absl::StatusOr<ProtoList>(envelope.status());
  if (!list.ok()) return absl::DataLossError(absl::StrCat(context, ": ", list.status().message()));
  ListResult out;
  out.decoded = true;
  out.resource_version = list->resource_version;
  out.continue_token = list->continue_token;
  for (std::string_view item : list->items) {
    absl::StatusOr<json> object = decoder(item);
    if (!object.ok()) {
      return absl::DataLossError(absl::StrCat(context, ": ", object.status().message()));
    }
    out.items.push_back(*std::move(object));
  }
  return out;
}

absl::StatusOr<json> RestKubeClient::Create(const Resource& r, const std::string& ns,
                                            const json& object) {
  std::string name = object.value("/metadata/name"_json_pointer, "");
  return Do("POST", r.Path(ns), object, "application/json",
            absl::StrCat("create ", Describe(r, ns, name)));
}

absl::StatusOr<json> RestKubeClient::Update(const Resource& r, const std::string& ns,
                                            const json& object) {
  std::string name = object.value("/metadata/name"_json_pointer, "");
  return Do("PUT", r.Path(ns, name), object, "application/json",
            absl::StrCat("update ", Describe(r, ns, name)));
}

absl::StatusOr<json> RestKubeClient::UpdateStatus(const Resource& r, const std::string& ns,
                                                  const json& object) {
  std::string name = object.value("/metadata/name"_json_pointer, "");
  return Do("PUT", r.Path(ns, name, "status"), object, "application/json",
            absl::StrCat("update status of ", Describe(r, ns, name)));
}

absl::Status RestKubeClient::Patch(const Resource& r, const std::string& ns,
                                   const std::string& name, PatchType type, const json& patch,
                                   const std::string& subresource) {
  return DoText({"PATCH", r.Path(ns, name, subresource), patch.dump(), PatchContentType(type),
                 absl::StrCat("patch ", subresource.empty() ? "" : subresource + " of ",
                              Describe(r, ns, name)),
                 kAcceptMetadata})
      .status();
}

namespace {

json DeleteBody(const DeleteOptions& options) {
  json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  switch (options.propagation) {
    case Propagation::kBackground:
      body["propagationPolicy"] = "Background";
      break;
    case Propagation::kForeground:
      body["propagationPolicy"] = "Foreground";
      break;
    case Propagation::kOrphan:
      body["propagationPolicy"] = "Orphan";
      break;
  }
  if (options.precondition_uid) body["preconditions"] = {{"uid", *options.precondition_uid}};
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  return body;
}

}  // namespace

absl::Status RestKubeClient::Delete(const Resource& r, const std::string& ns,
                                    const std::string& name, const DeleteOptions& options) {
  return DoText({"DELETE", r.Path(ns, name), DeleteBody(options).dump(), "application/json",
                 absl::StrCat("delete ", Describe(r, ns, name)), kAcceptMetadata})
      .status();
}

std::vector<absl::Status> RestKubeClient::CreateAll(const std::vector<CreateRequest>& requests,
                                                    int parallel) {
  std::vector<Prepared> prepared;
  for (const CreateRequest& c : requests) {
    const std::string name = c.object.value("/metadata/name"_json_pointer, "");
    prepared.push_back({"POST", c.resource->Path(c.ns), c.object.dump(), "application/json",
                        absl::StrCat("create ", Describe(*c.resource, c.ns, name)),
                        kAcceptMetadata});
  }
  return DoAll(prepared, parallel);
}

std::vector<absl::Status> RestKubeClient::DeleteAll(const std::vector<DeleteRequest>& requests,
                                                    int parallel) {
  std::vector<Prepared> prepared;
  for (const DeleteRequest& d : requests) {
    prepared.push_back(
        {"DELETE", d.resource->Path(d.ns, d.name), DeleteBody(d.options).dump(), "application/json",
         absl::StrCat("delete ", Describe(*d.resource, d.ns, d.name)), kAcceptMetadata});
  }
  return DoAll(prepared, parallel);
}

std::vector<absl::Status> RestKubeClient::DoAll(const std::vector<Prepared>& requests,
                                                int parallel) {
  std::vector<absl::Status> out(requests.size());
  const size_t window = static_cast<size_t>(std::max(parallel, 1));
  // A sliding window: up to `window` first attempts in flight on the I/O threads; each answer the
  // calling thread collects (in order) lets the next request go, so the connections stay busy
  // without waiting for a whole window to finish. The client-wide bound (in_flight_) is waited
  // for only while this call holds no slot; holding some, it sends more only if a slot is free.
  std::deque<pplx::task<http::http_response>> in_flight;
  std::vector<size_t> retry;
  size_t next = 0;
  auto fill = [&] {
    while (next < requests.size() && in_flight.size() < window) {
      if (in_flight.empty()) {
        in_flight_.Acquire();
      } else if (!in_flight_.TryAcquire()) {
        return;
      }
      const Prepared& r = requests[next++];
      if (r.method != "DELETE") limiter_.Wait();
      http::http_request req = MakeRequest(config_, r.method, r.path_and_query, r.accept);
      if (r.body) SetBody(req, *r.body, r.content_type);
      try {
        in_flight.push_back(client()->request(req));
      } catch (const std::exception&) {  // collected (and its slot released) as a failed answer
        in_flight.push_back(
            pplx::task_from_exception<http::http_response>(std::current_exception()));
      }
    }
  };
  for (size_t i = 0; i < requests.size(); ++i) {
    fill();
    const Prepared& r = requests[i];
    pplx::task<http::http_response> sent = std::move(in_flight.front());
    in_flight.pop_front();
    absl::Status status;
    try {
      http::http_response resp = sent.get();
      const bool protobuf = IsProtobuf(resp);
      std::string text = ReadBody(resp, protobuf);
      const int code = resp.status_code();
      Observe(r.method, code);
      if (code < 200 || code >= 300) {
        status = StatusFromHttp(code, ErrorBody(std::move(text), protobuf), r.context);
      }
    } catch (const std::exception& e) {
      Observe(r.method, 0);
      status = absl::UnavailableError(absl::StrCat(r.context, ": ", e.what()));
    }
    in_flight_.Release();
    out[i] = status;
    if (!status.ok() && IsRetryable(status)) retry.push_back(i);
  }
  // A retryable failure (429, 5xx, transport) goes through the one-at-a-time path, whose retries
  // honour Retry-After and the request deadline; after the window drained, holding no slot.
  for (size_t i : retry) out[i] = DoText(requests[i]).status();
  return out;
}

absl::StatusOr<std::unique_ptr<WatchStream>> RestKubeClient::Watch(const Resource& r,
                                                                   const std::string& ns,
                                                                   const ListOptions& options) {
  limiter_.Wait();
  // The server ends the watch after timeoutSeconds (with a bookmark just before); silence longer
  // than that means a half-open connection, and the idle timeout ends it.
  const int server_timeout = options.timeout_seconds > 0 ? options.timeout_seconds : 30;
  auto client = std::make_shared<http::client::http_client>(
      config_.server,
      MakeClientConfig(tls_, absl::Seconds(server_timeout) + config_.watch_idle_grace));
  ListOptions o = options;
  o.timeout_seconds = server_timeout;
  http::http_request req = MakeRequest(config_, "GET", r.Path(ns) + ListQuery(o, true),
                                       options.decoder ? kAcceptProtobuf : "application/json");
  pplx::cancellation_token_source cts;
  const std::string context = absl::StrCat("watch ", Describe(r, ns, ""));
  try {
    http::http_response resp = client->request(req, cts.get_token()).get();
    Observe("WATCH", resp.status_code());
    const bool protobuf = IsProtobuf(resp);
    if (resp.status_code() != 200) {
      return StatusFromHttp(resp.status_code(), ErrorBody(ReadBody(resp, protobuf), protobuf),
                            context);
    }
    auto body = std::make_unique<RestLineStream>(client, cts, std::move(resp));
    if (protobuf && options.decoder) {
      return std::unique_ptr<WatchStream>(
          new RestProtoWatchStream(std::move(body), options.decoder));
    }
    return std::unique_ptr<WatchStream>(new RestWatchStream(std::move(body)));
  } catch (const std::exception& e) {
    Observe("WATCH", 0);
    return absl::UnavailableError(absl::StrCat(context, ": ", e.what()));
  }
}

absl::StatusOr<std::string> RestKubeClient::GetText(const std::string& path_and_query,
                                                    const std::string& context) {
  return DoText({"GET", path_and_query, std::nullopt, "", context});
}

absl::StatusOr<std::unique_ptr<LineStream>> RestKubeClient::StreamLines(
    const std::string& path_and_query, const std::string& context, absl::Duration idle_timeout) {
  limiter_.Wait();
  auto client = std::make_shared<http::client::http_client>(config_.server,
                                                            MakeClientConfig(tls_, idle_timeout));
  http::http_request req = MakeRequest(config_, "GET", path_and_query);
  pplx::cancellation_token_source cts;
  try {
    http::http_response resp = client->request(req, cts.get_token()).get();
    Observe("GET", resp.status_code());
    if (resp.status_code() != 200) {
      return StatusFromHttp(resp.status_code(), resp.extract_string(true).get(), context);
    }
    return std::unique_ptr<LineStream>(new RestLineStream(client, cts, std::move(resp)));
  } catch (const std::exception& e) {
    Observe("GET", 0);
    return absl::UnavailableError(absl::StrCat(context, ": ", e.what()));
  }
}

}  // namespace disttrain::kube
