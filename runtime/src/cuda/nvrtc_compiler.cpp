// nvrtc_compiler.cpp - CUDA kernel compilation with NVRTC (dlopen'd) and its in-memory and on-disk caches.
#include "cuda/nvrtc_compiler.h"

#include <algorithm>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/cache_files.h"
#include "cuda/cuda_sources.h"
#include "base/error.h"
#include "base/shared_library.h"

namespace hj {

namespace {

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t finalMix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// A seeded 64-bit hash in the style of MurmurHash3 (one lane).
uint64_t hash64(const unsigned char *p, size_t n, uint64_t seed) {
  const uint64_t m1 = 0x87c37b91114253d5ULL, m2 = 0x4cf5ad432745937fULL;
  uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ULL);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t k;
    std::memcpy(&k, p + i, 8);
    k *= m1;
    k = rotl(k, 31);
    k *= m2;
    h ^= k;
    h = rotl(h, 27) * 5 + 0x52dce729;
  }
  uint64_t k = 0;
  for (size_t j = 0; i + j < n; ++j) k |= uint64_t{p[i + j]} << (8 * j);
  k *= m1;
  k = rotl(k, 31);
  k *= m2;
  h ^= k;
  return finalMix(h ^ n);
}

}  // namespace

std::string hashHex128(const std::string &data) {
  const auto *p = reinterpret_cast<const unsigned char *>(data.data());
  uint64_t a = hash64(p, data.size(), 0x243F6A8885A308D3ULL);
  uint64_t b = hash64(p, data.size(), 0x13198A2E03707344ULL);
  static const char digits[] = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    s[15 - i] = digits[(a >> (4 * i)) & 15];
    s[31 - i] = digits[(b >> (4 * i)) & 15];
  }
  return s;
}

namespace {

// The problem found with the image cache's directory (guarded by its mutex).
struct CacheProblem {
  std::mutex mutex;
  std::string text;
  bool said = false;
};
CacheProblem &cacheProblem() {
  static CacheProblem p;
  return p;
}

}  // namespace

std::string cudaCacheDirectory() {
  std::string dir;
  if (const char *off = std::getenv("HOSTJIT_CACHE"); off && std::strcmp(off, "0") == 0) return {};
  if (const char *d = std::getenv("HOSTJIT_CACHE_DIR"); d && *d) dir = std::string(d) + "/cuda";
  else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/hostjit/cuda";
  else if (const char *h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/hostjit/cuda";
  if (dir.empty()) return {};
  std::string problem = privateDirectoryProblem(dir);
  CacheProblem &p = cacheProblem();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.text = problem;
  if (problem.empty()) return dir;
  if (!p.said) {
    p.said = true;
    std::fprintf(stderr, "hostjit: warning: the CUDA image cache is not used: %s\n", problem.c_str());
  }
  return {};
}

}  // namespace hj

#ifdef HOSTJIT_HAVE_NVRTC

#include <cuda.h>  // CUDA_VERSION, for the NVRTC library's soname
#include <nvrtc.h>  // types and prototypes only: NVRTC is loaded with dlopen

namespace hj {

namespace {

// The NVRTC functions, resolved once per process on first use.
struct Nvrtc {
#define HJ_NVRTC_FN(sym) decltype(&::sym) sym = nullptr;
#include "cuda/nvrtc_functions.def"
#undef HJ_NVRTC_FN
  int major = 0, minor = 0;
  std::vector<int> archs;  // the sm_XY numbers it can compile for, ascending
  int32_t status = HJ_OK;
  std::string error;       // why it could not be loaded
  std::string libDir;      // the directory it was loaded from, "" if unknown
};

Nvrtc loadNvrtc() {
  Nvrtc nv;
  const std::string soname = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
  // CUDA 11.2 to 11.8 name it libnvrtc.so.11.2.
  std::vector<std::string> candidates = {soname, soname + ".2", "libnvrtc.so"};
  if (const char *home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(std::string(home) + "/lib64/" + soname);
  candidates.push_back("/usr/local/cuda/lib64/" + soname);
  OpenedLibrary opened = openLibrary(candidates);
  void *lib = opened.handle;
  if (!lib) {
    nv.status = HJ_ERR_NOT_FOUND;
    nv.error = "NVRTC not found (" + opened.firstError +
               "); install the CUDA toolkit's NVRTC or add it to LD_LIBRARY_PATH";
    return nv;
  }
#define HJ_NVRTC_FN(sym)                                                             \
  nv.sym = librarySymbol<decltype(&::sym)>(lib, #sym);                               \
  if (!nv.sym) {                                                                     \
    nv.status = HJ_ERR_NOT_FOUND;                                                    \
    nv.error = "the NVRTC library lacks " #sym " (NVRTC too old: CUDA 11.1 or newer is needed)"; \
    return nv;                                                                       \
  }
#include "cuda/nvrtc_functions.def"
#undef HJ_NVRTC_FN
  // The library stays loaded for the life of the process.
  if (std::string file = libraryFileOf(reinterpret_cast<void *>(nv.nvrtcVersion)); !file.empty())
    nv.libDir = std::filesystem::path(file).parent_path().string();
  if (nv.nvrtcVersion(&nv.major, &nv.minor) != NVRTC_SUCCESS) {
    nv.status = HJ_ERR_BACKEND;
    nv.error = "nvrtcVersion failed";
    return nv;
  }
  int n = 0;
  if (nv.nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
    nv.archs.resize(static_cast<size_t>(n));
    if (nv.nvrtcGetSupportedArchs(nv.archs.data()) != NVRTC_SUCCESS) nv.archs.clear();
  }
  return nv;
}

const Nvrtc &nvrtc() {
  static const Nvrtc nv = loadNvrtc();  // thread-safe, once per process
  return nv;
}

// Process-wide image cache: key -> image.
struct MemoryCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> images;
};

MemoryCache &memoryCache() {
  static MemoryCache cache;
  return cache;
}

bool plausibleImage(const std::string &data, bool ptx) {
  if (data.empty()) return false;
  if (ptx) return data.find(".target") != std::string::npos;
  return data.size() >= 4 && std::memcmp(data.data(), "\x7f" "ELF", 4) == 0;
}

std::shared_ptr<const std::string> readCacheFile(const std::string &path, bool ptx) {
  if (!trustedEntry(path)) return nullptr;  // absent, or someone else's: compiled again
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  auto data = std::make_shared<std::string>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad() || !plausibleImage(*data, ptx)) return nullptr;
  return data;
}

struct ProgramGuard {
  const Nvrtc &nv;
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog) nv.nvrtcDestroyProgram(&prog);
  }
};

// Runs NVRTC; on success `image` holds the cubin (or PTX).
int32_t runNvrtc(const Nvrtc &nv, const hj_kernel_desc &desc, const std::vector<std::string> &options,
                 const CudaCompileInputs &inputs, bool ptx, std::string &image) {
  const char *name = desc.name ? desc.name : "?";
  const char *path = desc.cuda_path ? desc.cuda_path : "<source>";
  ProgramGuard g{nv};
  std::vector<const char *> headerText, headerNames;
  for (const auto &[name, text] : inputs.headers) {
    headerNames.push_back(name.c_str());
    headerText.push_back(text.c_str());
  }
  nvrtcResult r = nv.nvrtcCreateProgram(&g.prog, desc.cuda_source, path, static_cast<int>(headerText.size()),
                                        headerText.data(), headerNames.data());
  if (r != NVRTC_SUCCESS) {
    g.prog = nullptr;
    return fail(HJ_ERR_BACKEND, "NVRTC could not create a program for kernel @%s (%s): %s", name, path,
                nv.nvrtcGetErrorString(r));
  }
  std::vector<const char *> opts;
  for (const std::string &o : options) opts.push_back(o.c_str());
  r = nv.nvrtcCompileProgram(g.prog, static_cast<int>(opts.size()), opts.data());
  std::string log;
  size_t logSize = 0;
  if (nv.nvrtcGetProgramLogSize(g.prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    log.resize(logSize);
    if (nv.nvrtcGetProgramLog(g.prog, log.data()) != NVRTC_SUCCESS) log.clear();
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
  if (r == NVRTC_ERROR_COMPILATION)
    return fail(HJ_ERR_INVALID_ARGUMENT, "NVRTC failed to compile kernel @%s (%s):\n%s", name, path,
                log.empty() ? "(NVRTC gave no log)" : log.c_str());
  if (r != NVRTC_SUCCESS)
    return fail(HJ_ERR_BACKEND, "NVRTC failed on kernel @%s (%s): %s%s%s", name, path, nv.nvrtcGetErrorString(r),
                log.empty() ? "" : "\n", log.c_str());
  size_t size = 0;
  r = ptx ? nv.nvrtcGetPTXSize(g.prog, &size) : nv.nvrtcGetCUBINSize(g.prog, &size);
  if (r == NVRTC_SUCCESS && size > 0) {
    image.assign(size, '\0');
    r = ptx ? nv.nvrtcGetPTX(g.prog, image.data()) : nv.nvrtcGetCUBIN(g.prog, image.data());
  }
  if (r != NVRTC_SUCCESS || size == 0)
    return fail(HJ_ERR_BACKEND, "NVRTC compiled kernel @%s (%s) but gave no %s: %s", name, path,
                ptx ? "PTX" : "cubin", nv.nvrtcGetErrorString(r));
  if (ptx && !image.empty() && image.back() == '\0') image.pop_back();  // std::string keeps its own terminator
  return HJ_OK;
}

}  // namespace

std::string nvrtcLibraryDirectory() { return nvrtc().libDir; }

int32_t compileCudaKernel(const hj_kernel_desc &desc, int ccMajor, int ccMinor, bool fresh, CudaImage &out) {
  const char *name = desc.name ? desc.name : "?";
  const Nvrtc &nv = nvrtc();
  if (nv.status != HJ_OK) return fail(nv.status, "cannot compile kernel @%s: %s", name, nv.error.c_str());

  // The device's exact architecture as a cubin. An architecture this NVRTC
  // does not list (newer than all it knows, or between two it knows) gets
  // PTX for the newest listed architecture below it (the driver compiles that).
  int arch = ccMajor * 10 + ccMinor;
  bool ptx = false;
  int target = arch;
  if (!nv.archs.empty()) {
    bool listed = std::find(nv.archs.begin(), nv.archs.end(), arch) != nv.archs.end();
    if (!listed && arch > nv.archs.front()) {
      ptx = true;
      target = *(std::upper_bound(nv.archs.begin(), nv.archs.end(), arch) - 1);
    } else if (arch < nv.archs.front()) {
      return fail(HJ_ERR_BACKEND,
                  "cannot compile kernel @%s: the device has compute capability %d.%d, but NVRTC %d.%d supports "
                  "sm_%d to sm_%d only",
                  name, ccMajor, ccMinor, nv.major, nv.minor, nv.archs.front(), nv.archs.back());
    }
  }
  std::vector<std::string> options = {(ptx ? "-arch=compute_" : "-arch=sm_") + std::to_string(target), "--std=c++17",
                                      "-default-device"};
  CudaCompileInputs inputs = cudaCompileInputs(desc, nv.libDir);
  options.insert(options.end(), inputs.options.begin(), inputs.options.end());

  std::string material = "hostjit cuda image v2\nnvrtc " + std::to_string(nv.major) + "." + std::to_string(nv.minor) +
                         "\n" + (ptx ? "ptx" : "cubin") + "\n";
  for (const std::string &o : options) material += o + "\n";
  for (const auto &[name, text] : inputs.headers) material += "header " + name + "\n" + text + "\n";
  material += inputs.dependencies;
  material += '\n';
  material += desc.cuda_source;
  out.key = hashHex128(material);
  out.compiled = false;

  MemoryCache &mem = memoryCache();
  if (!fresh) {
    std::lock_guard<std::mutex> lock(mem.mutex);
    if (auto it = mem.images.find(out.key); it != mem.images.end()) {
      out.data = it->second;
      return HJ_OK;
    }
  }
  std::string dir = cudaCacheDirectory();
  std::string file = dir.empty() ? std::string() : dir + "/" + out.key + (ptx ? ".ptx" : ".cubin");
  std::shared_ptr<const std::string> data;
  if (!fresh && !file.empty()) data = readCacheFile(file, ptx);
  if (!data) {
    std::string image;
    if (int32_t st = runNvrtc(nv, desc, options, inputs, ptx, image)) return st;
    data = std::make_shared<const std::string>(std::move(image));
    out.compiled = true;
    if (!file.empty()) writePrivateFile(file, data->data(), data->size());  // best effort
  }
  {
    std::lock_guard<std::mutex> lock(mem.mutex);
    mem.images[out.key] = data;
  }
  out.data = std::move(data);
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC

extern "C" const char *hj_cuda_cache_problem(void) {
  static thread_local std::string copy;
  hj::CacheProblem &p = hj::cacheProblem();
  std::lock_guard<std::mutex> lock(p.mutex);
  copy = p.text;
  return copy.c_str();
}
