// object_cache.cpp - reads and writes the persistent object cache.
#include "object_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "hostjit/runtime.h"
#include "llvm/Support/BLAKE3.h"

namespace hostjit::jit {

namespace {
constexpr char kMagic[8] = {'H', 'J', 'O', 'B', 'J', '0', '0', '1'};
constexpr size_t kHeader = 8 + 8 + 32;

std::array<uint8_t, 32> digest(llvm::StringRef data) {
  llvm::BLAKE3 h;
  h.update(data);
  return h.final();
}
}  // namespace

std::string ObjectCache::defaultDirectory(const std::string &configured) {
  if (const char *off = std::getenv("HOSTJIT_CACHE"); off && std::strcmp(off, "0") == 0) return {};
  if (!configured.empty()) return configured;
  if (const char *d = std::getenv("HOSTJIT_CACHE_DIR"); d && *d) return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/hostjit";
  if (const char *h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/hostjit";
  return {};
}

ObjectCache::ObjectCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  if (hj_cache_directory_check(dir_.c_str()) != HJ_OK) {
    problem_ = hj_last_error();
    dir_.clear();
  }
}

ObjectCache::Lookup ObjectCache::get(const std::string &key, std::unique_ptr<llvm::MemoryBuffer> *object) const {
  std::error_code ec;
  if (!std::filesystem::exists(pathOf(key), ec)) return Lookup::Miss;
  if (!hj_cache_entry_trusted(pathOf(key).c_str())) return Lookup::Untrusted;
  auto buf = llvm::MemoryBuffer::getFile(pathOf(key), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return Lookup::Miss;
  llvm::StringRef data = (*buf)->getBuffer();
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, 8) != 0) return Lookup::Corrupt;
  uint64_t size;
  std::memcpy(&size, data.data() + 8, 8);
  if (size != data.size() - kHeader) return Lookup::Corrupt;
  llvm::StringRef payload = data.substr(kHeader);
  auto want = digest(payload);
  if (std::memcmp(want.data(), data.data() + 16, 32) != 0) return Lookup::Corrupt;
  *object = llvm::MemoryBuffer::getMemBufferCopy(payload, key);
  return Lookup::Hit;
}

bool ObjectCache::put(const std::string &key, llvm::StringRef object) const {
  std::string entry(kHeader + object.size(), '\0');
  uint64_t size = object.size();
  auto d = digest(object);
  std::memcpy(entry.data(), kMagic, 8);
  std::memcpy(entry.data() + 8, &size, 8);
  std::memcpy(entry.data() + 16, d.data(), 32);
  std::memcpy(entry.data() + kHeader, object.data(), object.size());
  return hj_cache_write(pathOf(key).c_str(), entry.data(), entry.size()) == HJ_OK;
}

}  // namespace hostjit::jit
