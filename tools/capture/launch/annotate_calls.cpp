// nvtxpp-capture --annotate-calls: checks the values before the run and hands them to the
// audit library (tools/capture/inprocess/audit.cpp) through the child's environment.
#include "annotate_calls.hpp"

#include "../common/annotate_spec.hpp"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

namespace nvtxpp::capture {

bool annotate_calls::add(std::string const& value, std::string* error) {
  std::string why;
  if (parse_call_rules(value, &why).empty()) {
    if (error != nullptr) {
      *error = "--annotate-calls: " + why;
    }
    return false;
  }
  spec_ += (spec_.empty() ? "" : ",") + value;
  return true;
}

bool annotate_calls::locate(std::string const& inject_lib, std::string const& self_dir,
                            std::string* error) {
  std::string const name = "libnvtxpp_audit.so";
  std::string const lib_dir = inject_lib.substr(0, inject_lib.find_last_of('/'));
  for (std::string const& candidate :
       {lib_dir + "/" + name, self_dir + "/" + name, self_dir + "/../lib/" + name,
        self_dir + "/../lib64/" + name}) {
    char resolved[PATH_MAX];
    if (::access(candidate.c_str(), R_OK) == 0 && ::realpath(candidate.c_str(), resolved)) {
      audit_lib_ = resolved;  // the dynamic linker wants a path it can open from anywhere
      return true;
    }
  }
  if (error != nullptr) {
    *error = "--annotate-calls: cannot find " + name + " next to " + inject_lib + " or " + self_dir;
  }
  return false;
}

void annotate_calls::set_env() const {
  std::string audit = audit_lib_;
  if (char const* old = std::getenv("LD_AUDIT"); old != nullptr && *old != '\0') {
    audit += std::string{":"} + old;
  }
  ::setenv("LD_AUDIT", audit.c_str(), 1);
  ::setenv("NVTXPP_ANNOTATE_CALLS", spec_.c_str(), 1);
}

}  // namespace nvtxpp::capture
