// File: core/csv.cc
// The CSV reader of core/csv.h: one pass over the text, a record at a time.
#include "core/csv.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/files.h"
#include "core/strings.h"

namespace ndt {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Parses RFC 4180 records from a text, tracking line numbers.
class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : s_(text), name_(name) {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 byte-order mark
  }

  bool done() const { return pos_ >= s_.size(); }
  int line() const { return line_; }

  // The next record into *cells; *blank when it is one empty unquoted field (a blank line).
  Status Next(std::vector<std::string>* cells, bool* blank) {
    cells->clear();
    bool any_quoted = false;
    while (true) {
      std::string cell;
      bool quoted = false;
      NDT_RETURN_IF_ERROR(Field(&cell, &quoted, cells->size()));
      any_quoted = any_quoted || quoted;
      cells->push_back(std::move(cell));
      if (done()) break;
      const char c = s_[pos_];
      if (c == ',') {
        ++pos_;
        continue;
      }
      EndOfLine();
      break;
    }
    *blank = !any_quoted && cells->size() == 1 && (*cells)[0].empty();
    return Status::Ok();
  }

 private:
  // At '\n', "\r\n" or a '\r' at the end of the text.
  bool AtEndOfLine() const {
    if (done()) return true;
    if (s_[pos_] == '\n') return true;
    return s_[pos_] == '\r' && (pos_ + 1 == s_.size() || s_[pos_ + 1] == '\n');
  }
  void EndOfLine() {
    if (!done() && s_[pos_] == '\r') ++pos_;
    if (!done() && s_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
  }

  // One field, up to (not past) the ',' or line end after it.
  Status Field(std::string* out, bool* quoted, size_t index) {
    while (!done() && IsBlank(s_[pos_])) ++pos_;
    if (!done() && s_[pos_] == '"') {
      *quoted = true;
      const int start = line_;
      ++pos_;
      while (true) {
        if (done()) {
          return Status::InvalidInput(name_ + ":" + std::to_string(start) + ": column " +
                                      std::to_string(index + 1) +
                                      ": quoted field has no closing quote");
        }
        const char c = s_[pos_++];
        if (c == '"') {
          if (!done() && s_[pos_] == '"') {
            out->push_back('"');
            ++pos_;
            continue;
          }
          break;
        }
        if (c == '\n') ++line_;
        out->push_back(c);
      }
      while (!done() && IsBlank(s_[pos_])) ++pos_;
      if (!done() && s_[pos_] != ',' && !AtEndOfLine()) {
        return Status::InvalidInput(
            name_ + ":" + std::to_string(line_) + ": column " + std::to_string(index + 1) +
            ": text after the closing quote of '" + *out + "'; put the whole field in quotes");
      }
      return Status::Ok();
    }
    while (!done() && s_[pos_] != ',' && !AtEndOfLine()) out->push_back(s_[pos_++]);
    while (!out->empty() && IsBlank(out->back())) out->pop_back();
    return Status::Ok();
  }

  std::string_view s_;
  const std::string& name_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

StatusOr<CsvFile> CsvFile::Read(const std::string& path) {
  NDT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "CSV file"));
  return Parse(text, path);
}

StatusOr<CsvFile> CsvFile::Parse(std::string_view text, const std::string& name) {
  CsvFile f;
  f.name_ = name;
  Parser p(text, name);
  bool have_header = false;
  std::vector<std::string> cells;
  while (!p.done()) {
    const int line = p.line();
    bool blank = false;
    NDT_RETURN_IF_ERROR(p.Next(&cells, &blank));
    if (blank) continue;
    if (!have_header) {
      have_header = true;
      f.header_line_ = line;
      f.header_ = std::move(cells);
    } else {
      f.rows_.push_back(CsvRow{line, std::move(cells)});
    }
    cells = {};
  }
  return f;
}

int CsvFile::Column(std::string_view column) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == column) return static_cast<int>(i);
  }
  return -1;
}

Status CsvFile::Require(const std::vector<std::string>& columns) const {
  for (const std::string& c : columns) {
    if (Column(c) < 0) {
      return Status::InvalidInput(name_ + ":" + std::to_string(header_line_) + ": no column '" + c +
                                  "'; want a header " + Join(columns, ","));
    }
  }
  return Status::Ok();
}

std::string CsvFile::Where(const CsvRow& r) const {
  return name_ + ":" + std::to_string(r.line) + ": ";
}

const std::string& CsvFile::Cell(const CsvRow& r, int column) {
  static const std::string kEmpty;
  if (column < 0 || column >= static_cast<int>(r.cells.size())) return kEmpty;
  return r.cells[column];
}

StatusOr<double> CsvFile::Number(const CsvRow& r, int column) const {
  const std::string& c = Cell(r, column);
  char* end = nullptr;
  const double v = c.empty() ? 0 : std::strtod(c.c_str(), &end);
  if (c.empty() || end != c.c_str() + c.size() || !std::isfinite(v)) {
    const std::string col =
        column >= 0 && column < static_cast<int>(header_.size()) ? header_[column] : "?";
    return Status::InvalidInput(Where(r) + col + " '" + c + "' is not a number");
  }
  return v;
}

}  // namespace ndt
