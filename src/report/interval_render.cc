#include "report/interval_render.h"

#include <cstdio>

namespace ndt {

Json IntervalJson(const IntervalClass& c, std::pair<double, double> lo_hi) {
  return Json{{"p10", lo_hi.first},
              {"p90", lo_hi.second},
              {"basis", c.basis},
              {"cases", c.cases},
              {"class", c.name}};
}

std::string IntervalText(const IntervalClass& c, std::pair<double, double> lo_hi,
                         const char* num_fmt, const std::string& unit) {
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, num_fmt, lo_hi.first);
  std::snprintf(hi, sizeof hi, num_fmt, lo_hi.second);
  std::string s = std::string(" (p10\u2013p90 ") + lo + "\u2013" + hi +
                  (unit.empty() || unit[0] == '%' ? "" : " ") + unit + "; " +
                  std::to_string(c.cases) + (c.cases == 1 ? " case, " : " cases, ") + c.name;
  if (c.default_width) {
    s += "; " + (c.default_why.empty() ? std::string("fewer than 3 sources") : c.default_why) +
         ": default width";
  }
  return s + ")";
}

}  // namespace ndt
