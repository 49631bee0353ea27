// cuda_sources.h - what NVRTC gets besides a kernel's source: include
// directories, built-in headers and extra options, and the files the source
// includes (for cache keys that change whenever an included header does).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hostjit/runtime.h"

namespace hj {

struct CudaCompileInputs {
  // -I for the kernel file's directory, then the CUDA toolkit's include
  // directories (when found), then the kernel's nvrtc_options, then
  // HOSTJIT_NVRTC_OPTIONS. A relative -I in the options is taken relative to
  // the kernel file's directory.
  std::vector<std::string> options;
  // Headers given to NVRTC from memory (name, text): the C and C++ library
  // headers of nvrtc_headers.h, which NVRTC does not ship.
  std::vector<std::pair<std::string, std::string>> headers;
  // Every file the source includes, transitively, that could be found in the
  // kernel's directory or an include directory (path and contents; toolkit
  // headers by path only), and the names that could not be found. Part of
  // the image cache key.
  std::string dependencies;
};

// `nvrtcLibraryDir`: the directory NVRTC was loaded from ("" if unknown),
// where the toolkit's include directory is looked for (../include) after
// CUDA_HOME and CUDA_PATH, before /usr/local/cuda/include.
CudaCompileInputs cudaCompileInputs(const hj_kernel_desc &desc, const std::string &nvrtcLibraryDir);

// Splits an option string at white space; a '"' or '\'' quotes a part that
// holds spaces.
std::vector<std::string> splitOptions(const char *text);

}  // namespace hj
