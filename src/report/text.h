// File: report/text.h
// printf into a string: how the renderers (report/*_render.h) build the text the CLI prints
// (kept byte-for-byte what the CLI's printf calls wrote before the commands moved into the
// library).
#ifndef NDTWIN_REPORT_TEXT_H_
#define NDTWIN_REPORT_TEXT_H_

#include <string>
#include <vector>

namespace ndt {

class TextOut {
 public:
  // Appends printf(fmt, ...) to the text.
  void operator()(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // A plain text table: columns padded to their widest cell, `right` ones right-aligned, a rule
  // of dashes under the head.
  void Table(const std::vector<std::string>& head, const std::vector<bool>& right,
             const std::vector<std::vector<std::string>>& rows);
  std::string& str() { return s_; }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

}  // namespace ndt

#endif  // NDTWIN_REPORT_TEXT_H_
