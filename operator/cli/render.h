// `disttrain-operator render`: prints the objects the operator would create for a job, after
// defaults and validation, so users can preview a job and tests can check the pure core.
#ifndef DISTTRAIN_OPERATOR_CLI_RENDER_H_
#define DISTTRAIN_OPERATOR_CLI_RENDER_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace disttrain::cli {

// `args` are the arguments after "render". Writes the objects to `out`, warnings and errors to
// `err`; returns the process exit code (0 ok, 2 invalid flags or an invalid job, 1 unreadable
// file).
int RunRender(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace disttrain::cli

#endif  // DISTTRAIN_OPERATOR_CLI_RENDER_H_
