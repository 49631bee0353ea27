// files.cpp - reading and writing the files a user names (contract in files.h).
#include "hostjit/ir/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hostjit/runtime.h"

namespace hostjit {

namespace {

Error fileError(int32_t status, const std::string &path, const std::string &what) {
  return Error{status, path + ": " + what};
}

const char *kindOf(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Expected<std::string> readFileBytes(const std::string &path, uint64_t limit) {
  // O_NONBLOCK: opening a FIFO with no writer must not wait for one.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) return fileError(HJ_ERR_NOT_FOUND, path, std::string("cannot read the file: ") + std::strerror(errno));
  struct stat st{};
  if (::fstat(f.fd, &st) != 0)
    return fileError(HJ_ERR_NOT_FOUND, path, std::string("cannot read the file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fileError(HJ_ERR_INVALID_ARGUMENT, path, std::string(kindOf(st.st_mode)) + ", expected a regular file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > limit)
    return fileError(HJ_ERR_INVALID_ARGUMENT, path,
                     std::to_string(size) + " bytes; hostjit reads files of at most " + std::to_string(limit) +
                         " bytes of this kind");
  std::string bytes(size, '\0');
  size_t have = 0;
  while (have < size) {
    ssize_t n = ::read(f.fd, bytes.data() + have, size - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fileError(HJ_ERR_NOT_FOUND, path, std::string("cannot read the file: ") + std::strerror(errno));
    if (n == 0) break;  // shrank while read: what is there is what it holds
    have += static_cast<size_t>(n);
  }
  bytes.resize(have);
  return bytes;
}

Expected<void> writeFileBytes(const std::string &path, std::string_view bytes) {
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) return fileError(HJ_ERR_INVALID_ARGUMENT, path, std::string("cannot write the file: ") + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fileError(HJ_ERR_INVALID_ARGUMENT, path,
                       std::string("cannot write the file: ") + std::strerror(n < 0 ? errno : ENOSPC));
    done += static_cast<size_t>(n);
  }
  int fd = f.fd;
  f.fd = -1;
  if (::close(fd) != 0)
    return fileError(HJ_ERR_INVALID_ARGUMENT, path, std::string("cannot write the file: ") + std::strerror(errno));
  return {};
}

}  // namespace hostjit
