#include "core/strings.h"

#include <algorithm>
#include <cctype>

namespace ndt {

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ToLower(a) == ToLower(b);
}

int EditDistance(std::string_view a0, std::string_view b0) {
  std::string a = ToLower(a0), b = ToLower(b0);
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  // Allow about a third of the word to differ, at least 2 edits; ties go to the first.
  int limit = std::max(2, static_cast<int>(word.size()) / 3);
  std::optional<std::string> best;
  int best_d = limit + 1;
  for (const std::string& c : candidates) {
    int d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> m = ClosestMatch(word, candidates);
  return m ? "; did you mean '" + *m + "'?" : "";
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace ndt
