// Kubernetes' protobuf encoding written by hand, for the tests of what reads it: an object in
// its envelope. Lengths are single bytes, so the messages stay under 128 bytes.
#ifndef DISTTRAIN_TESTS_UNIT_OPERATOR_KUBE_PROTO_ENVELOPE_H_
#define DISTTRAIN_TESTS_UNIT_OPERATOR_KUBE_PROTO_ENVELOPE_H_

#include <string>

namespace disttrain::kube::testing {

// An object in the API server's envelope: "k8s\0", Unknown{typeMeta{apiVersion, kind}, raw}.
inline std::string Envelope(const std::string& api_version, const std::string& kind,
                            const std::string& raw) {
  using namespace std::string_literals;
  const std::string type_meta = "\x0a"s + static_cast<char>(api_version.size()) + api_version +
                                "\x12" + static_cast<char>(kind.size()) + kind;
  return "k8s\0"s + "\x0a" + static_cast<char>(type_meta.size()) + type_meta + "\x12" +
         static_cast<char>(raw.size()) + raw;
}

}  // namespace disttrain::kube::testing

#endif  // DISTTRAIN_TESTS_UNIT_OPERATOR_KUBE_PROTO_ENVELOPE_H_
