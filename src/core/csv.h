// File: core/csv.h
// The one CSV reader of ndtwin (request traces, dataset lengths, the validation tables). A file
// is a header line naming the columns, then rows. RFC 4180 quoting: a field in double quotes may
// hold commas, line breaks and doubled quotes ("" is one "); CRLF or LF line ends; a UTF-8
// byte-order mark at the start is skipped; spaces around a field are trimmed outside quotes
// (inside quotes they are kept); blank lines are skipped. Rows may have fewer or more cells than
// the header: Cell() reads a missing one as "", callers decide whether that is an error.
//
//   NDT_ASSIGN_OR_RETURN(CsvFile f, CsvFile::Read(path));
//   NDT_RETURN_IF_ERROR(f.Require({"arrival_s", "input_tokens"}));
//   const int a = f.Column("arrival_s");
//   for (const CsvRow& r : f.rows()) {
//     NDT_ASSIGN_OR_RETURN(double t, f.Number(r, a));  // "path:7: arrival_s 'x' is not a number"
//   }
#ifndef NDTWIN_CORE_CSV_H_
#define NDTWIN_CORE_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ndt {

// One record: its cells and the line it starts on (1-based; the header is line 1 unless blank
// lines precede it).
struct CsvRow {
  int line = 0;
  std::vector<std::string> cells;
};

class CsvFile {
 public:
  // Reads and parses `path`. NotFound when it cannot be opened; InvalidInput ("path:line: ...")
  // on an unterminated quote or text after a closing quote. An empty file has no header and no
  // rows (not an error: callers say what header they want).
  static StatusOr<CsvFile> Read(const std::string& path);
  // Parses `text`; `name` stands for the file in errors.
  static StatusOr<CsvFile> Parse(std::string_view text, const std::string& name);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<CsvRow>& rows() const { return rows_; }
  // The line of the header (1 unless blank lines precede it).
  int header_line() const { return header_line_; }

  // Index of the first column called `column`, or -1.
  int Column(std::string_view column) const;
  // InvalidInput "name:H: no column 'x'; want a header a,b,c" for the first of `columns` missing
  // (H: the header's line).
  Status Require(const std::vector<std::string>& columns) const;
  // "name:line: " for messages about row `r`.
  std::string Where(const CsvRow& r) const;
  // Cell `column` of `r`; "" when the row is shorter or column is -1.
  static const std::string& Cell(const CsvRow& r, int column);
  // Cell `column` of `r` as a finite number (the whole cell, as strtod reads it). Error:
  // "name:line: <column name> '<cell>' is not a number".
  StatusOr<double> Number(const CsvRow& r, int column) const;

 private:
  std::string name_;
  int header_line_ = 1;
  std::vector<std::string> header_;
  std::vector<CsvRow> rows_;
};

}  // namespace ndt

#endif  // NDTWIN_CORE_CSV_H_
