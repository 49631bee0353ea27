// object_cache.h - the persistent object cache of compiled programs.
//
// Entries are files <dir>/<key>.o holding a header (magic, payload size,
// BLAKE3 of the payload) and the object. A missing, truncated or corrupt
// entry is a miss (corrupt ones are counted and rebuilt), never trusted.
// Writers write a temporary file in the same directory and rename it over
// the entry, so concurrent processes never see a partial file.
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

  explicit ObjectCache(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }

  enum class Lookup { Hit, Miss, Corrupt };
  // Reads entry `key`; on Hit, *object holds the object file.
  Lookup get(const std::string &key, std::unique_ptr<llvm::MemoryBuffer> *object) const;
  // Stores entry `key`; failures (read-only disk) only lose the entry.
  bool put(const std::string &key, llvm::StringRef object) const;
  std::string pathOf(const std::string &key) const { return dir_ + "/" + key + ".o"; }

 private:
  std::string dir_;
};

}  // namespace hostjit::jit
