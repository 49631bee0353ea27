// test_files.cpp - the files a user names: regular files only, of bounded
// size, refused at once when special (a FIFO never blocks), and writes
// whose failure (a full disk) is an error naming the file.
#include "helpers.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hostjit/exec/npy.h"
#include "hostjit/ir/files.h"

using namespace hostjit;
using namespace hostjit::test;

namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("hostjit_files_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string file(const std::string &name) const { return (dir / name).string(); }
};

std::string readError(const std::string &path, uint64_t limit = kMaxTextFileBytes) {
  auto r = readFileBytes(path, limit);
  REQUIRE(!r);
  return r.error().message;
}

}  // namespace

TEST_CASE("files: special files are refused without reading them, naming the file", "[files]") {
  Scratch s;
  std::string fifo = s.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(readError(fifo) == fifo + ": a FIFO, expected a regular file");  // no writer: never waited on
  CHECK(readError(s.dir.string()) == s.dir.string() + ": a directory, expected a regular file");
  CHECK(readError("/dev/zero") == "/dev/zero: a character device, expected a regular file");
  CHECK(readError(s.file("missing")) == s.file("missing") + ": cannot read the file: No such file or directory");
  CHECK(readFileBytes(s.file("missing"), 1).error().status == HJ_ERR_NOT_FOUND);
  // Through the readers that use it.
  CHECK(readNpy(fifo).error().message == fifo + ": a FIFO, expected a regular file");
  Diagnostics d;
  parseFile(s.dir.string(), d);
  REQUIRE(d.size() == 1);
  CHECK(d.list()[0].message == s.dir.string() + ": a directory, expected a regular file");
}

TEST_CASE("files: a file over its kind's limit is refused before it is read", "[files]") {
  Scratch s;
  std::string big = s.file("big.hir");
  {
    std::ofstream(big) << "func";
  }
  // Sparse: its size says 256 MiB + 1 without the disk holding it.
  fs::resize_file(big, kMaxTextFileBytes + 1);
  CHECK(readError(big) == big + ": 268435457 bytes; hostjit reads files of at most 268435456 bytes of this kind");
  auto asData = readFileBytes(s.file("big.hir"), kMaxDataFileBytes);
  REQUIRE(asData);
  CHECK(asData->size() == kMaxTextFileBytes + 1);
  CHECK(asData->compare(0, 4, "func") == 0);
  Diagnostics d;
  parseFile(big, d);
  REQUIRE(d.size() == 1);
  CHECK(d.list()[0].message == big + ": 268435457 bytes; hostjit reads files of at most 268435456 bytes of this kind");
}

TEST_CASE("files: a failed write is an error naming the file", "[files]") {
  Scratch s;
  CHECK(writeFileBytes(s.file("ok"), "bytes"));
  auto back = readFileBytes(s.file("ok"), 16);
  REQUIRE(back);
  CHECK(*back == "bytes");
  // A full disk: the write fails, and so must the call.
  CHECK(writeFileBytes("/dev/full", "bytes").error().message ==
        "/dev/full: cannot write the file: No space left on device");
  std::string link = s.file("full.npy");
  fs::create_symlink("/dev/full", link);
  NpyArray a;
  a.shape = {2};
  a.data = {1, 2, 3, 4, 5, 6, 7, 8};
  auto w = writeNpy(link, a);
  REQUIRE(!w);
  CHECK(w.error().message == link + ": cannot write the file: No space left on device");
  CHECK(writeFileBytes(s.dir.string(), "x").error().message.rfind(s.dir.string() + ": cannot write the file: ", 0) == 0);
}
