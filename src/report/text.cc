#include "report/text.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace ndt {

void TextOut::operator()(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    const size_t old = s_.size();
    s_.resize(old + static_cast<size_t>(n) + 1);
    std::vsnprintf(s_.data() + old, static_cast<size_t>(n) + 1, fmt, ap2);
    s_.resize(old + static_cast<size_t>(n));
  }
  va_end(ap2);
}

void TextOut::Table(const std::vector<std::string>& head, const std::vector<bool>& right,
                    const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size(); ++i) {
      if (i) s_ += "  ";
      const std::string pad(w[i] - r[i].size(), ' ');
      s_ += right[i] ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : "");
    }
    s_ += "\n";
  };
  line(head);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
}

}  // namespace ndt
