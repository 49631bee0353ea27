// shared_library.h - the one way the runtime loads a library at run time
// (dlopen) and finds its symbols: the CUDA driver, NVRTC, cuBLAS, cuBLASLt,
// NCCL, host kernel libraries and custom call libraries.
#pragma once

#include <string>
#include <vector>

namespace hj {

// What opening a library came to: the handle of the first candidate that
// loaded (RTLD_NOW | RTLD_LOCAL), or null with the candidates tried and the
// loader's message for the first that failed.
struct OpenedLibrary {
  void *handle = nullptr;
  std::string firstError;  // dlerror() of the first failure ("unknown error" if it gave none)
  std::string tried;       // the candidates tried before one loaded, ", "-separated
};

// Tries each candidate (a soname or a path) in order. The library stays
// loaded until closeLibrary (the CUDA libraries and NCCL: for the process).
OpenedLibrary openLibrary(const std::vector<std::string> &candidates);

// Where to look for one of CUDA's libraries, `stem` ("libcublas"): the path
// in environment variable `envVar` alone when it is set; else stem.so.13,
// stem.so.12 and stem.so by soname (a library the process loaded already,
// PyTorch's say, is found by its soname), then lib64/stem.so under
// $CUDA_HOME, $CUDA_PATH and /usr/local/cuda.
std::vector<std::string> cudaLibraryCandidates(const char *envVar, const std::string &stem);

// Opens the CUDA library `what` ("cuBLAS") from cudaLibraryCandidates(envVar,
// stem): *handle, and "" ; or null and why, for a message: "no cuBLAS: none
// of ... could be loaded (install CUDA's <package>, or set <envVar> to the
// library's path)".
std::string openCudaLibrary(const char *what, const char *package, const char *envVar, const std::string &stem,
                            void **handle);

// Why a library cannot be used when it lacks `symbol`: "no <what>: the
// library loaded does not export <symbol> (too old?)".
std::string missingSymbol(const char *what, const char *symbol);

// The address of `name` in the library, or null.
void *librarySymbol(void *handle, const char *name);

// `name` as a function pointer of type F, or null.
template <typename F>
F librarySymbol(void *handle, const char *name) {
  return reinterpret_cast<F>(librarySymbol(handle, name));
}

// The file the library holding `address` was loaded from, "" if unknown.
std::string libraryFileOf(const void *address);

void closeLibrary(void *handle);

}  // namespace hj
