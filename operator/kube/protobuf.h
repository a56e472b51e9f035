// Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf), as far as the operator
// reads it: the envelope every object comes in ("k8s\0" + runtime.Unknown), lists, watch event
// frames and meta/v1 Status. The objects themselves are decoded by the caller's ObjectDecoder,
// which reads only the fields it needs (policy/pod_projection_proto.cc). The API server
// serves protobuf for built-in types (pods, services), not for custom resources.
// Pure functions over byte views; thread-safe.
#ifndef DISTTRAIN_OPERATOR_KUBE_PROTOBUF_H_
#define DISTTRAIN_OPERATOR_KUBE_PROTOBUF_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace disttrain::kube {

inline constexpr char kProtobufMediaType[] = "application/vnd.kubernetes.protobuf";

// An object in its envelope: the 4 magic bytes "k8s\0", then runtime.Unknown with the type and
// the object's own message in `raw`.
struct ProtoObject {
  std::string api_version, kind;
  std::string_view raw;
};
absl::StatusOr<ProtoObject> ParseProtoObject(std::string_view data);

// A list's message (PodList, ServiceList, ...): ListMeta and the items' messages.
struct ProtoList {
  std::string resource_version, continue_token;
  std::vector<std::string_view> items;
};
absl::StatusOr<ProtoList> ParseProtoList(std::string_view raw);

// One frame of a protobuf watch (the frames are length-prefixed, 4 bytes big-endian): a
// meta/v1 WatchEvent whose object is an enveloped object (see ParseProtoObject).
struct ProtoWatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  std::string_view object;
};
absl::StatusOr<ProtoWatchEvent> ParseProtoWatchEvent(std::string_view frame);

// A meta/v1 Status message (an error response, a watch's ERROR event) as the JSON the API
// server would have sent: kind, status, message, reason, code.
nlohmann::json ProtoStatusToJson(std::string_view raw);

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_PROTOBUF_H_
