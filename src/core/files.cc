#include "core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace ndt {
namespace {

namespace fs = std::filesystem;

std::string Quoted(const std::string& path) { return "'" + path + "'"; }

// The folder a file path lives in ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

StatusOr<std::string> ReadTextFile(const std::string& path, const std::string& what) {
  if (path.empty()) return Status::InvalidInput(what + " needs a file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return Status::NotFound(what + ": " + Quoted(path) + " not found");
    }
    return Status::InvalidInput(what + ": cannot read " + Quoted(path) + ": " +
                                std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return Status::InvalidInput(what + ": " + Quoted(path) + " is a directory; give a file");
  }
  // A pipe or /dev/stdin is read (up to the limit below); only a regular file has a size first.
  if (S_ISREG(st.st_mode) && st.st_size > kMaxInputFileBytes) {
    return Status::InvalidInput(what + ": " + Quoted(path) + " is " +
                                std::to_string(st.st_size >> 20) + " MiB, more than the " +
                                std::to_string(kMaxInputFileBytes >> 20) +
                                " MiB an input file may be");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::InvalidInput(what + ": cannot read " + Quoted(path) + ": " +
                                std::strerror(errno));
  }
  std::string out;
  std::vector<char> buf(1 << 16);
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    out.append(buf.data(), n);
    if (static_cast<int64_t>(out.size()) > kMaxInputFileBytes) break;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::InvalidInput(what + ": error reading " + Quoted(path));
  if (static_cast<int64_t>(out.size()) > kMaxInputFileBytes) {
    return Status::InvalidInput(what + ": " + Quoted(path) + " is more than the " +
                                std::to_string(kMaxInputFileBytes >> 20) +
                                " MiB an input file may be");
  }
  return out;
}

Status CheckWritablePath(const std::string& path, const std::string& what) {
  if (path.empty()) return Status::InvalidInput(what + " needs a file name");
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Status::InvalidInput(what + ": " + Quoted(path) + " is a directory; give a file name");
  }
  const std::string folder = FolderOf(path);
  if (!fs::is_directory(folder, ec)) {
    return Status::InvalidInput(what + ": cannot write " + Quoted(path) + ": folder " +
                                Quoted(folder) + " does not exist");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    return Status::InvalidInput(what + ": cannot write " + Quoted(path) + ": folder " +
                                Quoted(folder) + " is not writable (" + std::strerror(errno) + ")");
  }
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) {
    return Status::InvalidInput(what + ": cannot write " + Quoted(path) + ": " +
                                std::strerror(errno));
  }
  return Status::Ok();
}

namespace {

// Writes straight into a target that is not a regular file (/dev/null, /dev/stdout, a pipe):
// renaming over it would replace the device or pipe itself.
Status WriteInPlace(const std::string& path, std::string_view data, const std::string& what) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return Status::InvalidInput(what + ": cannot write " + Quoted(path) + ": " +
                                std::strerror(errno));
  }
  const bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  if (std::fclose(f) != 0 || !ok) {
    return Status::InvalidInput(what + ": cannot write " + Quoted(path));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomic(const std::string& path_in, std::string_view data, const std::string& what) {
  NDT_RETURN_IF_ERROR(CheckWritablePath(path_in, what));
  std::error_code ec;
  std::string path = path_in;
  // A link: replace the file it points to, not the link.
  if (fs::is_symlink(path, ec)) {
    const fs::path target = fs::weakly_canonical(path, ec);
    if (ec) return Status::InvalidInput(what + ": cannot resolve the link " + Quoted(path));
    path = target.string();
    NDT_RETURN_IF_ERROR(CheckWritablePath(path, what));
  }
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) return WriteInPlace(path, data, what);
  std::string tmp = FolderOf(path) + "/." + fs::path(path).filename().string() + ".XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return Status::InvalidInput(what + ": cannot write " + Quoted(path) + ": " +
                                std::strerror(errno));
  }
  tmp = name.data();
  auto fail = [&](const std::string& why) {
    ::unlink(tmp.c_str());
    return Status::InvalidInput(what + ": cannot write " + Quoted(path) + ": " + why);
  };
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      return fail(why);
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; an output file gets the usual 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) return fail(std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail(std::strerror(errno));
  return Status::Ok();
}

}  // namespace ndt
