// cache_files.cpp - private cache directories and entries (checks, atomic private writes).
#include "cache/cache_files.h"

#include "base/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace hj {

namespace {

std::string modeText(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// mkdir -p with mode 0700 for every directory it makes.
bool makeDirectories(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) return true;
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !makeDirectories(dir.substr(0, slash))) return false;
  return ::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

}  // namespace

std::string privateDirectoryProblem(const std::string &dir) {
  if (dir.empty()) return "no directory";
  if (!makeDirectories(dir)) return "cannot create " + dir + ": " + std::strerror(errno);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return "cannot examine " + dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
  if (st.st_uid != ::geteuid())
    return dir + " belongs to user " + std::to_string(st.st_uid) + ", not to this user (" + std::to_string(::geteuid()) +
           ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return dir + " has mode " + modeText(st.st_mode) +
           ": others can write it, and so could put code there that hostjit would run (chmod 700 it)";
  return {};
}

bool trustedEntry(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

bool writePrivateFile(const std::string &path, const void *data, uint64_t bytes) {
  static std::atomic<uint64_t> counter{0};
  uint64_t salt = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                  (std::hash<std::thread::id>{}(std::this_thread::get_id()) << 1) ^ counter.fetch_add(1);
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(salt);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const char *p = static_cast<const char *>(data);
  uint64_t left = bytes;
  bool ok = true;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    p += n;
    left -= static_cast<uint64_t>(n);
  }
  ok = ::fchmod(fd, 0600) == 0 && ok;  // whatever the umask made of it
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return true;
  ::unlink(tmp.c_str());
  return false;
}

}  // namespace hj

using hj::fail;
using hj::guarded;

extern "C" {

int32_t hj_cache_directory_check(const char *dir) {
  return guarded([&] {
    if (!dir) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_cache_directory_check: dir is NULL");
    std::string problem = hj::privateDirectoryProblem(dir);
    return problem.empty() ? HJ_OK : fail(HJ_ERR_INVALID_ARGUMENT, "%s", problem.c_str());
  });
}

int32_t hj_cache_entry_trusted(const char *path) {
  try {
    return path && hj::trustedEntry(path) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int32_t hj_cache_write(const char *path, const void *data, uint64_t bytes) {
  return guarded([&] {
    if (!path || (!data && bytes)) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_cache_write: path and data are required");
    return hj::writePrivateFile(path, data, bytes) ? HJ_OK
                                                   : fail(HJ_ERR_BACKEND, "cannot write cache entry %s: %s", path,
                                                          std::strerror(errno));
  });
}

}  // extern "C"
