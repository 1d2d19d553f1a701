// File: core/check.h
// NDT_CHECK(cond, msg): aborts with file:line when an internal invariant breaks, in every
// build (release included). For our bugs only; user errors are a Status (core/status.h).
#ifndef NDTWIN_CORE_CHECK_H_
#define NDTWIN_CORE_CHECK_H_

#include <string>

namespace ndt::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace ndt::internal

#define NDT_CHECK(cond, msg)                                                     \
  do {                                                                           \
    if (!(cond)) ::ndt::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

#endif  // NDTWIN_CORE_CHECK_H_
