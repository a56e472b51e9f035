#include "operator/kube/rest_http.h"

#include <cpprest/containerstream.h>

#include <algorithm>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <vector>

#include "operator/kube/protobuf.h"

namespace disttrain::kube {

namespace http = web::http;

namespace {

std::chrono::milliseconds Millis(absl::Duration d) {
  return std::chrono::milliseconds(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

}  // namespace

http::client::http_client_config MakeClientConfig(std::shared_ptr<const TlsMaterial> tls,
                                                  absl::Duration timeout) {
  http::client::http_client_config c;
  c.set_timeout(Millis(timeout));
  c.set_validate_certificates(true);
  c.set_ssl_context_callback(
      [tls](boost::asio::ssl::context& ctx) { tls->ApplyTo(ctx.native_handle()); });
  return c;
}

http::http_request MakeRequest(const RestConfig& config, const std::string& method,
                               const std::string& path_and_query, const char* accept) {
  http::http_request req(method);
  req.set_request_uri(path_and_query);
  req.headers().add("Accept", accept);
  req.headers().add("User-Agent", config.user_agent);
  if (!config.bearer_token.empty()) {
    req.headers().add("Authorization", "Bearer " + config.bearer_token);
  }
  return req;
}

void SetBody(http::http_request& req, const std::string& body, const std::string& content_type) {
  std::vector<uint8_t> bytes(body.begin(), body.end());
  const size_t length = bytes.size();
  req.set_body(concurrency::streams::bytestream::open_istream(std::move(bytes)), length,
               content_type);
}

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

bool IsProtobuf(const http::http_response& resp) {
  return resp.headers().content_type().rfind(kProtobufMediaType, 0) == 0;
}

std::string ReadBody(http::http_response& resp, bool protobuf) {
  if (!protobuf) return resp.extract_string(true).get();
  const std::vector<unsigned char> bytes = resp.extract_vector().get();
  return std::string(bytes.begin(), bytes.end());
}

std::string ErrorBody(std::string text, bool protobuf) {
  if (!protobuf) return text;
  absl::StatusOr<ProtoObject> object = ParseProtoObject(text);
  return object.ok() ? ProtoStatusToJson(object->raw).dump() : std::string();
}

}  // namespace disttrain::kube
