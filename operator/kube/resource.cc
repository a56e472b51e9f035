#include "operator/kube/resource.h"

#include "absl/strings/str_cat.h"

namespace disttrain::kube {

std::string Resource::Path(absl::string_view ns, absl::string_view name,
                           absl::string_view subresource) const {
  std::string path =
      group.empty() ? absl::StrCat("/api/", version) : absl::StrCat("/apis/", group, "/", version);
  if (namespaced && !ns.empty()) absl::StrAppend(&path, "/namespaces/", ns);
  absl::StrAppend(&path, "/", plural);
  if (!name.empty()) absl::StrAppend(&path, "/", name);
  if (!subresource.empty()) absl::StrAppend(&path, "/", subresource);
  return path;
}

}  // namespace disttrain::kube
