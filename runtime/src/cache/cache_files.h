// cache_files.h - the on-disk caches' file rules: private directories,
// trusted entries, entries written privately and atomically.
//
// The caches hold code that hostjit processes load and run (native objects,
// CUDA images). Anyone who can write a cache directory could run code in
// every process that uses it, so a directory is used only when it belongs to
// the calling user and no one else can write it, and an entry only when it
// does too (as ccache and OpenSSH check their files).
#pragma once

#include <cstdint>
#include <string>

namespace hj {

// Creates `dir` (and missing parents) with mode 0700 if absent, then checks
// it: a directory, owned by the effective user, not writable by group or
// others. "" when usable, else why not.
std::string privateDirectoryProblem(const std::string &dir);

// Whether an existing entry may be loaded: a regular file (not a link),
// owned by the effective user, not writable by group or others.
bool trustedEntry(const std::string &path);

// Writes data to `path` through a temporary file of mode 0600 in the same
// directory, renamed over it; false (and nothing left behind) on failure.
bool writePrivateFile(const std::string &path, const void *data, uint64_t bytes);

}  // namespace hj
