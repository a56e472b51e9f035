// The HTTP messages of RestKubeClient with cpprestsdk: client settings (TLS, idle timeout),
// requests (method, path, Accept, credentials, body) and reading a response's body. Internal to
// operator/kube.
#ifndef DISTTRAIN_OPERATOR_KUBE_REST_HTTP_H_
#define DISTTRAIN_OPERATOR_KUBE_REST_HTTP_H_

#include <cpprest/http_client.h>

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "operator/kube/config.h"
#include "operator/kube/kube_client.h"
#include "operator/kube/tls.h"

namespace disttrain::kube {

// Protobuf where the server has it (built-in types), JSON otherwise.
inline constexpr char kAcceptProtobuf[] = "application/vnd.kubernetes.protobuf, application/json";
// For writes whose answer is not read: the object's metadata only (PartialObjectMetadata, in
// protobuf for every resource, custom ones included). A status patch's answer is 3 KB instead of
// 10 KB of JSON, a created pod's 0.6 KB instead of 3.8 KB.
inline constexpr char kAcceptMetadata[] =
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, "
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";

// TLS from `tls`; cpprestsdk's timeout is an idle timeout: it fires when no byte moves for that
// long.
web::http::client::http_client_config MakeClientConfig(std::shared_ptr<const TlsMaterial> tls,
                                                       absl::Duration timeout);

web::http::http_request MakeRequest(const RestConfig& config, const std::string& method,
                                    const std::string& path_and_query,
                                    const char* accept = "application/json");

// The body goes in as a stream of bytes: cpprestsdk's set_body(std::string) reads a char buffer
// through an unsigned-char stream, a type pun that UndefinedBehaviorSanitizer rightly reports.
void SetBody(web::http::http_request& req, const std::string& body,
             const std::string& content_type);

const char* PatchContentType(PatchType type);

bool IsProtobuf(const web::http::http_response& resp);

// The whole body: bytes as sent for protobuf (extract_string would apply a text charset), text
// otherwise.
std::string ReadBody(web::http::http_response& resp, bool protobuf);

// An error response's body as JSON text for StatusFromHttp (a protobuf one holds a Status).
std::string ErrorBody(std::string text, bool protobuf);

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_REST_HTTP_H_
