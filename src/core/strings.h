// File: core/strings.h
// Small text helpers shared by loaders and the CLI: case-insensitive comparison,
// edit distance and "did you mean" suggestions (as ninja's SpellcheckString).
#ifndef NDTWIN_CORE_STRINGS_H_
#define NDTWIN_CORE_STRINGS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ndt {

std::string ToLower(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// Levenshtein distance, case-insensitive.
int EditDistance(std::string_view a, std::string_view b);
// The closest candidate within a distance that scales with the word's length, if any.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);
// "; did you mean 'X'?" or "" when nothing is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);
// Joins items with a separator.
std::string Join(const std::vector<std::string>& items, std::string_view sep);

}  // namespace ndt

#endif  // NDTWIN_CORE_STRINGS_H_
