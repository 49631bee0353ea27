// object_cache.h - the persistent object cache of compiled programs.
//
// Entries are files <dir>/<key>.o holding a header (magic, payload size,
// BLAKE3 of the payload) and the object. A missing, truncated or corrupt
// entry is a miss (corrupt ones are counted and rebuilt), never trusted.
// Writers write a temporary file of mode 0600 in the same directory and
// rename it over the entry, so concurrent processes never see a partial
// file. The objects are code this process runs: the directory is used only
// when it is private to the user (created 0700, owned by the user, not
// writable by group or others), and an entry only when it is too
// (hj_cache_directory_check, hj_cache_entry_trusted); the digest catches
// corruption, these checks keep out other users' code.
#pragma once

#include <memory>
#include <string>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

namespace hostjit::jit {

class ObjectCache {
 public:
  // The directory from options/env (see CompileOptions); "" when disabled.
  static std::string defaultDirectory(const std::string &configured);

  // Checks dir (creating it when absent); a directory that is not private
  // leaves the cache disabled and its reason in problem().
  explicit ObjectCache(std::string dir);
  bool enabled() const { return !dir_.empty(); }
  const std::string &problem() const { return problem_; }

  enum class Lookup { Hit, Miss, Corrupt, Untrusted };
  // Reads entry `key`; on Hit, *object holds the object file.
  Lookup get(const std::string &key, std::unique_ptr<llvm::MemoryBuffer> *object) const;
  // Stores entry `key`; failures (read-only disk) only lose the entry.
  bool put(const std::string &key, llvm::StringRef object) const;
  std::string pathOf(const std::string &key) const { return dir_ + "/" + key + ".o"; }

 private:
  std::string dir_;
  std::string problem_;
};

}  // namespace hostjit::jit
