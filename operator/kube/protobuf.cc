#include "operator/kube/protobuf.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/proto_reader.h"

namespace disttrain::kube {

// Field numbers from k8s.io/apimachinery's generated.proto (runtime and meta/v1).
absl::StatusOr<ProtoObject> ParseProtoObject(std::string_view data) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (data.substr(0, kMagic.size()) != kMagic) {
    return absl::DataLossError("protobuf object without the k8s envelope");
  }
  ProtoObject out;
  bool has_raw = false;
  ProtoReader unknown(data.substr(kMagic.size()));
  while (unknown.Next()) {
    if (unknown.field() == 1) {  // TypeMeta
      ProtoReader type_meta(unknown.bytes());
      while (type_meta.Next()) {
        if (type_meta.field() == 1) out.api_version = type_meta.bytes();
        if (type_meta.field() == 2) out.kind = type_meta.bytes();
      }
      if (!type_meta.ok()) return absl::DataLossError("malformed protobuf type meta");
    } else if (unknown.field() == 2) {
      out.raw = unknown.bytes();
      has_raw = true;
    }
  }
  if (!unknown.ok() || !has_raw) return absl::DataLossError("malformed protobuf envelope");
  return out;
}

absl::StatusOr<ProtoList> ParseProtoList(std::string_view raw) {
  ProtoList out;
  ProtoReader list(raw);
  while (list.Next()) {
    if (list.field() == 1) {  // ListMeta
      ProtoReader meta(list.bytes());
      while (meta.Next()) {
        if (meta.field() == 2) out.resource_version = meta.bytes();
        if (meta.field() == 3) out.continue_token = meta.bytes();
      }
      if (!meta.ok()) return absl::DataLossError("malformed protobuf list metadata");
    } else if (list.field() == 2) {
      out.items.push_back(list.bytes());
    }
  }
  if (!list.ok()) return absl::DataLossError("malformed protobuf list");
  return out;
}

absl::StatusOr<ProtoWatchEvent> ParseProtoWatchEvent(std::string_view frame) {
  ProtoWatchEvent out;
  ProtoReader event(frame);
  while (event.Next()) {
    if (event.field() == 1) {
      out.type = event.bytes();
    } else if (event.field() == 2) {  // RawExtension
      ProtoReader raw(event.bytes());
      while (raw.Next()) {
        if (raw.field() == 1) out.object = raw.bytes();
      }
      if (!raw.ok()) return absl::DataLossError("malformed protobuf watch object");
    }
  }
  if (!event.ok() || out.type.empty()) return absl::DataLossError("malformed protobuf watch event");
  return out;
}

nlohmann::json ProtoStatusToJson(std::string_view raw) {
  nlohmann::json out = {{"kind", "Status"}, {"apiVersion", "v1"}};
  ProtoReader status(raw);
  while (status.Next()) {
    switch (status.field()) {
      case 2:
        out["status"] = std::string(status.bytes());
        break;
      case 3:
        out["message"] = std::string(status.bytes());
        break;
      case 4:
        out["reason"] = std::string(status.bytes());
        break;
      case 6:
        out["code"] = status.int32();
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace disttrain::kube
