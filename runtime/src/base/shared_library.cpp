// shared_library.cpp - dlopen, dlsym, dladdr and dlclose, behind one helper.
#include "base/shared_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace hj {

OpenedLibrary openLibrary(const std::vector<std::string> &candidates) {
  OpenedLibrary out;
  for (const std::string &name : candidates) {
    out.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out.handle) return out;
    if (out.firstError.empty()) {
      const char *e = dlerror();
      out.firstError = e ? e : "unknown error";
    }
    out.tried += (out.tried.empty() ? "" : ", ") + name;
  }
  return out;
}

std::vector<std::string> cudaLibraryCandidates(const char *envVar, const std::string &stem) {
  if (const char *env = std::getenv(envVar); env && *env) return {env};
  std::vector<std::string> names;
  for (const char *suffix : {".so.13", ".so.12", ".so"}) names.push_back(stem + suffix);
  for (const char *dir : {static_cast<const char *>(std::getenv("CUDA_HOME")),
                          static_cast<const char *>(std::getenv("CUDA_PATH")), "/usr/local/cuda"})
    if (dir && *dir) names.push_back(std::string(dir) + "/lib64/" + stem + ".so");
  return names;
}

std::string openCudaLibrary(const char *what, const char *package, const char *envVar, const std::string &stem,
                            void **handle) {
  OpenedLibrary opened = openLibrary(cudaLibraryCandidates(envVar, stem));
  *handle = opened.handle;
  if (opened.handle) return "";
  return std::string("no ") + what + ": none of " + opened.tried + " could be loaded (install CUDA's " + package +
         ", or set " + envVar + " to the library's path)";
}

std::string missingSymbol(const char *what, const char *symbol) {
  return std::string("no ") + what + ": the library loaded does not export " + symbol + " (too old?)";
}

void *librarySymbol(void *handle, const char *name) { return handle ? dlsym(handle, name) : nullptr; }

std::string libraryFileOf(const void *address) {
  Dl_info info;
  if (dladdr(address, &info) && info.dli_fname) return info.dli_fname;
  return "";
}

void closeLibrary(void *handle) {
  if (handle) dlclose(handle);
}

}  // namespace hj
