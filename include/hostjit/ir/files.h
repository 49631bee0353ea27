// files.h - reading and writing the files a user names: regular files only,
// of bounded size, every refusal naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hostjit/ir/error.h"

namespace hostjit {

// The largest file of each kind hostjit reads (docs/cli.md#files): text
// (.hir, fusion and Triton JSON) and data (.npy arrays, kernel images).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t(256) << 20;
inline constexpr uint64_t kMaxDataFileBytes = uint64_t(16) << 30;

// The bytes of file `path`. A FIFO, device, socket or directory is refused
// without reading it (so it never blocks), as is a file of more than
// `limit` bytes; HJ_ERR_NOT_FOUND when it cannot be opened. Messages start
// with `path: `.
Expected<std::string> readFileBytes(const std::string &path, uint64_t limit);

// Writes `bytes` to `path` (created or truncated), then closes it: a failed
// write or close (a full disk) is an error naming the file.
Expected<void> writeFileBytes(const std::string &path, std::string_view bytes);

}  // namespace hostjit
