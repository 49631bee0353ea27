// test_cache_security.cpp - the on-disk caches hold code: directories are
// created private (0700), entries written 0600, and a directory or entry that
// another user owns or can write is never used (object cache and CUDA image
// cache alike).
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cache/cache_files.h"
#include "helpers.h"
#include "cuda/nvrtc_compiler.h"

using namespace hostjit;
using namespace hostjit::test;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("hostjit-cache-security-" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

unsigned modeOf(const fs::path &p) {
  struct stat st;
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

Program example(const char *name) {
  Diagnostics d;
  Program p = parseFile(std::string(HOSTJIT_SOURCE_DIR) + "/examples/" + name, d);
  REQUIRE(d.empty());
  return p;
}

CompileOptions cacheIn(const fs::path &dir) {
  CompileOptions co;
  co.cacheDir = dir;
  co.tiered = false;
  return co;
}

std::vector<fs::path> entries(const fs::path &dir) {
  std::vector<fs::path> out;
  for (auto &e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

uid_t nobody() {
  struct passwd *pw = ::getpwnam("nobody");
  return pw ? pw->pw_uid : 65534;
}

}  // namespace

TEST_CASE("cache files: directories are made 0700, entries written 0600, others' files refused", "[cache]") {
  TempDir t;
  fs::path dir = t.path / "a" / "b";
  CHECK(hj::privateDirectoryProblem(dir.string()) == "");
  CHECK(modeOf(t.path / "a") == 0700);
  CHECK(modeOf(dir) == 0700);
  std::string data = "payload";
  REQUIRE(hj::writePrivateFile((dir / "e").string(), data.data(), data.size()));
  CHECK(modeOf(dir / "e") == 0600);
  CHECK(hj::trustedEntry((dir / "e").string()));
  CHECK(entries(dir).size() == 1);  // no temporary file left

  fs::permissions(dir / "e", fs::perms(0666));
  CHECK(!hj::trustedEntry((dir / "e").string()));
  fs::permissions(dir / "e", fs::perms(0600));
  fs::create_symlink(dir / "e", dir / "link");
  CHECK(!hj::trustedEntry((dir / "link").string()));
  if (::geteuid() == 0) {
    REQUIRE(::chown((dir / "e").c_str(), nobody(), static_cast<gid_t>(-1)) == 0);
    CHECK(!hj::trustedEntry((dir / "e").string()));
  }

  fs::permissions(dir, fs::perms(0777));
  CHECK_THAT(hj::privateDirectoryProblem(dir.string()),
             Catch::EndsWith("has mode 0777: others can write it, and so could put code there that hostjit would run "
                             "(chmod 700 it)"));
  fs::permissions(dir, fs::perms(0770));
  CHECK_THAT(hj::privateDirectoryProblem(dir.string()), Catch::Contains("has mode 0770"));
  fs::permissions(dir, fs::perms(0700));
  if (::geteuid() == 0) {
    REQUIRE(::chown(dir.c_str(), nobody(), static_cast<gid_t>(-1)) == 0);
    CHECK_THAT(hj::privateDirectoryProblem(dir.string()), Catch::Contains("belongs to user"));
  }
  std::ofstream(t.path / "file") << "x";
  CHECK_THAT(hj::privateDirectoryProblem((t.path / "file").string()), Catch::EndsWith("is not a directory"));
}

TEST_CASE("object cache: a directory others can write is not used, and the caller can read why", "[cache]") {
  TempDir t;
  fs::create_directories(t.path);
  fs::permissions(t.path, fs::perms(0777));
  Program p = example("grid_sum.hir");
  auto rt = makeRuntime();
  JitStats before = sharedJit().stats();
  auto cp = sharedJit().compile(p, rt, cacheIn(t.path));
  REQUIRE(cp);  // compiled without the cache
  CHECK(!(*cp)->fromCache());
  JitStats after = sharedJit().stats();
  CHECK(after.cacheRefused == before.cacheRefused + 1);
  CHECK(after.cacheWrites == before.cacheWrites);
  CHECK_THAT(after.cacheProblem, Catch::Contains("has mode 0777: others can write it"));
  CHECK(entries(t.path).empty());
}

TEST_CASE("object cache: an entry another user owns or others can write is ignored and rebuilt", "[cache]") {
  TempDir t;
  Program p = example("grid_sum.hir");
  auto rt = makeRuntime();
  { REQUIRE(sharedJit().compile(p, rt, cacheIn(t.path))); }
  CHECK(modeOf(t.path) == 0700);
  auto files = entries(t.path);
  REQUIRE(files.size() == 1);
  CHECK(modeOf(files[0]) == 0600);
  {
    auto warm = sharedJit().compile(p, rt, cacheIn(t.path));
    REQUIRE(warm);
    CHECK((*warm)->fromCache());
  }
  auto tamperedWith = [&](auto &&tamper) {
    tamper(files[0]);
    JitStats before = sharedJit().stats();
    auto cp = sharedJit().compile(p, rt, cacheIn(t.path));
    REQUIRE(cp);
    CHECK(!(*cp)->fromCache());
    JitStats after = sharedJit().stats();
    CHECK(after.cacheUntrusted == before.cacheUntrusted + 1);
    CHECK(after.cacheWrites == before.cacheWrites + 1);  // rebuilt and written again, privately
    CHECK(modeOf(files[0]) == 0600);
    auto again = sharedJit().compile(p, rt, cacheIn(t.path));
    REQUIRE(again);
    CHECK((*again)->fromCache());
  };
  tamperedWith([](const fs::path &f) { fs::permissions(f, fs::perms(0666)); });
  if (::geteuid() == 0)
    tamperedWith([](const fs::path &f) { REQUIRE(::chown(f.c_str(), nobody(), static_cast<gid_t>(-1)) == 0); });
}

TEST_CASE("CUDA image cache: a directory others can write is not used, and hj_cuda_cache_problem says why", "[cache]") {
  TempDir t;
  fs::create_directories(t.path / "cuda");
  const char *old = std::getenv("HOSTJIT_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("HOSTJIT_CACHE_DIR", t.path.c_str(), 1);
  CHECK(hj::cudaCacheDirectory() == (t.path / "cuda").string());
  CHECK(std::string(hj_cuda_cache_problem()) == "");
  fs::permissions(t.path / "cuda", fs::perms(0757));
  CHECK(hj::cudaCacheDirectory() == "");
  CHECK_THAT(std::string(hj_cuda_cache_problem()), Catch::Contains("has mode 0757: others can write it"));
  fs::permissions(t.path / "cuda", fs::perms(0700));
  CHECK(hj::cudaCacheDirectory() == (t.path / "cuda").string());
  CHECK(std::string(hj_cuda_cache_problem()) == "");
  if (old) ::setenv("HOSTJIT_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("HOSTJIT_CACHE_DIR");
}
