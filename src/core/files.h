// File: core/files.h
// Reading and writing whole files at the boundary, with one-line errors: a directory where a
// file is expected, a missing file, a file too large to be an input, an output path whose
// folder does not exist or cannot be written. Outputs are written to a temporary file in the
// same folder and renamed over the target, so a failed write leaves no partial file and an
// existing file untouched.
//
//   NDT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "--hf-config"));
//   NDT_RETURN_IF_ERROR(CheckWritablePath(path, "--trace"));   // before a long run
//   NDT_RETURN_IF_ERROR(WriteFileAtomic(path, json, "--trace"));
#ifndef NDTWIN_CORE_FILES_H_
#define NDTWIN_CORE_FILES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ndt {

// Inputs are text written by people or tools (YAML, JSON, CSV); none is near this size, and a
// larger one (a disk image, /dev/zero) would only exhaust memory.
inline constexpr int64_t kMaxInputFileBytes = int64_t{256} << 20;  // 256 MiB

// The whole file (or pipe: `<(...)`, /dev/stdin). NotFound "<what>: 'path' not found";
// InvalidInput for a directory, more than kMaxInputFileBytes, or a read error. `what` names the
// flag or kind of file ("--hf-config", "model file").
StatusOr<std::string> ReadTextFile(const std::string& path, const std::string& what);

// InvalidInput unless `path` can be written as a file: not empty, not a directory, its folder
// exists and is a directory. Run before a long computation so the user hears of it first.
Status CheckWritablePath(const std::string& path, const std::string& what);

// Writes `data` to `path` through a temporary file in the same folder and a rename: readers
// never see a partial file, and on any error the target is left as it was and the temporary is
// removed. A link is followed (the file it names is replaced); a target that is not a regular
// file (/dev/null, a pipe) is written in place, never renamed over.
Status WriteFileAtomic(const std::string& path, std::string_view data, const std::string& what);

}  // namespace ndt

#endif  // NDTWIN_CORE_FILES_H_
