// nvtxpp-capture --annotate-calls 'FUNC@LIB': the option's handling (docs/annotate.md).
#pragma once

#include <string>

namespace nvtxpp::capture {

/// The --annotate-calls values given, checked and joined for NVTXPP_ANNOTATE_CALLS.
class annotate_calls {
 public:
  /// Adds one value (a comma list of FUNC@LIB); false with @p error set when it is malformed.
  bool add(std::string const& value, std::string* error);

  /// Whether any value was given.
  [[nodiscard]] bool wanted() const { return !spec_.empty(); }

  /// Finds libnvtxpp_audit.so: next to @p inject_lib (the injection library), else in
  /// @p self_dir or ../lib; false with @p error set when there is none.
  bool locate(std::string const& inject_lib, std::string const& self_dir, std::string* error);

  /// In the child, before exec: LD_AUDIT gets the audit library (in front of any the user set),
  /// NVTXPP_ANNOTATE_CALLS the joined specification.
  void set_env() const;

 private:
  std::string spec_;
  std::string audit_lib_;
};

}  // namespace nvtxpp::capture
