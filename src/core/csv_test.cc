// Tests of the CSV reader: RFC 4180 quoting, line ends, the byte-order mark, trimming, header
// lookup and the file:line of errors. Each input is spelled out; expected cells follow from
// core/csv.h's rules.
#include "core/csv.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace ndt {
namespace {

CsvFile P(std::string_view text) {
  StatusOr<CsvFile> f = CsvFile::Parse(text, "t.csv");
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? std::move(f).value() : CsvFile();
}

using Cells = std::vector<std::string>;

TEST(Csv, PlainHeaderAndRows) {
  CsvFile f = P("a,b,c\n1,2,3\n4,5,6\n");
  EXPECT_EQ(f.header(), (Cells{"a", "b", "c"}));
  ASSERT_EQ(f.rows().size(), 2u);
  EXPECT_EQ(f.rows()[0].cells, (Cells{"1", "2", "3"}));
  EXPECT_EQ(f.rows()[1].cells, (Cells{"4", "5", "6"}));
  EXPECT_EQ(f.rows()[0].line, 2);
  EXPECT_EQ(f.rows()[1].line, 3);
}

TEST(Csv, QuotedFieldsHoldCommasDoubledQuotesAndLineBreaks) {
  // "x, y" is one cell; "say ""hi""" is say "hi"; the third row's quoted cell spans lines 4-5,
  // so the row after it starts on line 6.
  CsvFile f = P("name,note\n\"x, y\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\nz,4\n");
  ASSERT_EQ(f.rows().size(), 4u);
  EXPECT_EQ(f.rows()[0].cells, (Cells{"x, y", "1"}));
  EXPECT_EQ(f.rows()[1].cells, (Cells{"say \"hi\"", "2"}));
  EXPECT_EQ(f.rows()[2].cells, (Cells{"two\nlines", "3"}));
  EXPECT_EQ(f.rows()[2].line, 4);
  EXPECT_EQ(f.rows()[3].line, 6);
  EXPECT_EQ(f.rows()[3].cells, (Cells{"z", "4"}));
}

TEST(Csv, CrlfLineEndsAndByteOrderMark) {
  // The BOM is not part of the first column's name; no '\r' is left in any cell.
  CsvFile f =
      P("\xEF\xBB\xBF"
        "a,b\r\n1,\"2\"\r\n3,4\r\n");
  EXPECT_EQ(f.header(), (Cells{"a", "b"}));
  EXPECT_EQ(f.Column("a"), 0);
  ASSERT_EQ(f.rows().size(), 2u);
  EXPECT_EQ(f.rows()[0].cells, (Cells{"1", "2"}));
  EXPECT_EQ(f.rows()[1].cells, (Cells{"3", "4"}));
}

TEST(Csv, SpacesTrimmedOutsideQuotesKeptInside) {
  CsvFile f = P(" a , b \n 1 ,\" 2 \" , x y \n");
  EXPECT_EQ(f.header(), (Cells{"a", "b"}));
  ASSERT_EQ(f.rows().size(), 1u);
  EXPECT_EQ(f.rows()[0].cells, (Cells{"1", " 2 ", "x y"}));
}

TEST(Csv, BlankLinesSkippedEmptyCellsKept) {
  // Line 3 is blank and line 5 only spaces: skipped, but the numbering counts them. A trailing
  // comma is an empty last cell; "" is an empty quoted cell (a row, not a blank line).
  CsvFile f = P("a,b\n1,\n\n,2\n   \n\"\"\n");
  ASSERT_EQ(f.rows().size(), 3u);
  EXPECT_EQ(f.rows()[0].cells, (Cells{"1", ""}));
  EXPECT_EQ(f.rows()[1].cells, (Cells{"", "2"}));
  EXPECT_EQ(f.rows()[1].line, 4);
  EXPECT_EQ(f.rows()[2].cells, (Cells{""}));
  EXPECT_EQ(f.rows()[2].line, 6);
}

TEST(Csv, LastLineWithoutLineEnd) {
  CsvFile f = P("a\n1\n2");
  ASSERT_EQ(f.rows().size(), 2u);
  EXPECT_EQ(f.rows()[1].cells, (Cells{"2"}));
}

TEST(Csv, EmptyTextHasNoHeader) {
  CsvFile f = P("");
  EXPECT_TRUE(f.header().empty());
  EXPECT_TRUE(f.rows().empty());
  EXPECT_EQ(f.Require({"a"}).message(), "t.csv:1: no column 'a'; want a header a");
}

TEST(Csv, HeaderLookupByName) {
  CsvFile f = P("x,y,z\n1,2\n");
  EXPECT_EQ(f.Column("z"), 2);
  EXPECT_EQ(f.Column("w"), -1);
  EXPECT_TRUE(f.Require({"z", "x"}).ok());
  Status s = f.Require({"x", "w"});
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message(), "t.csv:1: no column 'w'; want a header x,w");
  // The row is short: a missing cell reads as "".
  EXPECT_EQ(CsvFile::Cell(f.rows()[0], 2), "");
  EXPECT_EQ(CsvFile::Cell(f.rows()[0], -1), "");
  EXPECT_EQ(CsvFile::Cell(f.rows()[0], 1), "2");
}

TEST(Csv, NumberErrorsNameFileLineColumnAndValue) {
  CsvFile f = P("\nqps,tokens\n1.5,abc\n2e3,\n");  // header on line 2
  EXPECT_EQ(f.header_line(), 2);
  EXPECT_EQ(*f.Number(f.rows()[0], 0), 1.5);
  EXPECT_EQ(*f.Number(f.rows()[1], 0), 2000.0);
  EXPECT_EQ(f.Number(f.rows()[0], 1).status().message(), "t.csv:3: tokens 'abc' is not a number");
  EXPECT_EQ(f.Number(f.rows()[1], 1).status().message(), "t.csv:4: tokens '' is not a number");
  EXPECT_EQ(f.Where(f.rows()[1]), "t.csv:4: ");
}

TEST(Csv, BadQuotingIsAnErrorWithItsLine) {
  StatusOr<CsvFile> open = CsvFile::Parse("a,b\n1,\"never closed\n2,3\n", "t.csv");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().message(), "t.csv:2: column 2: quoted field has no closing quote");
  StatusOr<CsvFile> after = CsvFile::Parse("a,b\n1,2\n\"x\"y,3\n", "t.csv");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().message(),
            "t.csv:3: column 1: text after the closing quote of 'x'; put the whole field in "
            "quotes");
}

TEST(Csv, ReadsAFileAndSaysWhenItCannot) {
  const std::string path = ::testing::TempDir() + "/csv_test.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out << "a,b\r\n1,2\r\n";
  }
  StatusOr<CsvFile> f = CsvFile::Read(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->name(), path);
  EXPECT_EQ(f->rows()[0].cells, (Cells{"1", "2"}));
  std::remove(path.c_str());
  StatusOr<CsvFile> gone = CsvFile::Read(path);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "CSV file: '" + path + "' not found");
  // A directory where the file should be is named as such (core/files.h).
  StatusOr<CsvFile> dir = CsvFile::Read(::testing::TempDir());
  EXPECT_NE(dir.status().message().find("is a directory; give a file"), std::string::npos);
}

}  // namespace
}  // namespace ndt
