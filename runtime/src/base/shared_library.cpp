// shared_library.cpp - dlopen, dlsym, dladdr and dlclose, behind one helper.
#include "base/shared_library.h"

#include <dlfcn.h>

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
