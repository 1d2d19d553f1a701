#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace ndt::internal {

void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "ndtwin: internal error: %s:%d: check failed: %s: %s\n", file, line, cond,
               msg.c_str());
  std::abort();
}

}  // namespace ndt::internal
