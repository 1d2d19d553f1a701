#include "core/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ndt {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("ndt_files_test_" + std::to_string(::getpid()))).string();
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(FilesTest, ReadsAFileAndRefusesADirectoryOrAMissingFileByName) {
  std::ofstream(dir_ + "/a.txt") << "hello\n";
  EXPECT_EQ(*ReadTextFile(dir_ + "/a.txt", "--x"), "hello\n");
  StatusOr<std::string> r = ReadTextFile(dir_, "--model-file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--model-file: '" + dir_ + "' is a directory; give a file");
  r = ReadTextFile(dir_ + "/missing", "--x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(ReadTextFile("", "--x").ok());
}

TEST_F(FilesTest, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  const std::string p = dir_ + "/out.json";
  std::ofstream(p) << "old";
  ASSERT_TRUE(WriteFileAtomic(p, "new", "--trace").ok());
  EXPECT_EQ(*ReadTextFile(p, "--x"), "new");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // no .out.json.XXXXXX left
}

TEST_F(FilesTest, DevicesAreWrittenInPlaceAndLinksFollowed) {
  // /dev/null stays a device (a rename over it would replace it with a file).
  ASSERT_TRUE(WriteFileAtomic("/dev/null", "x", "--trace").ok());
  EXPECT_FALSE(fs::is_regular_file("/dev/null"));
  const std::string real = dir_ + "/real.json";
  std::ofstream(real) << "old";
  fs::create_symlink(real, dir_ + "/link.json");
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/link.json", "new", "--trace").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ + "/link.json"));
  EXPECT_EQ(*ReadTextFile(real, "--x"), "new");
}

TEST_F(FilesTest, UnwritableTargetsAreOneLineErrorsAndWriteNothing) {
  Status s = WriteFileAtomic(dir_ + "/no/such/folder/t.json", "x", "--trace");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--trace: cannot write"), std::string::npos);
  EXPECT_NE(s.message().find("does not exist"), std::string::npos);
  s = WriteFileAtomic(dir_, "x", "--dot");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is a directory"), std::string::npos);
  EXPECT_FALSE(CheckWritablePath("", "--trace").ok());
  EXPECT_TRUE(CheckWritablePath(dir_ + "/new.json", "--trace").ok());
  EXPECT_FALSE(fs::exists(dir_ + "/new.json"));  // checking writes nothing
}

}  // namespace
}  // namespace ndt
