// workspace_sizes.cpp - PyTorch's matmul workspace sizes from its settings.
#include "cuda/workspace_sizes.h"

#include <algorithm>
#include <cctype>

namespace hj {

namespace {

// The decimal number at s[i] (advancing i), or false when none is there or
// it does not fit.
bool number(const std::string &s, size_t &i, uint64_t &out) {
  size_t start = i;
  uint64_t v = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + uint64_t(s[i] - '0');
  }
  out = v;
  return i > start;
}

// All of `text` a decimal number of `unit`s.
bool whole(const char *text, uint64_t unit, uint64_t &out) {
  std::string s(text);
  size_t i = 0;
  uint64_t v = 0;
  if (!number(s, i, v) || i != s.size() || (unit > 1 && v > UINT64_MAX / unit)) return false;
  out = v * unit;
  return true;
}

}  // namespace

WorkspaceSizes workspaceSizes(const char *cublasConfig, const char *ltKib, const char *hostjitBytes, int ccMajor,
                              int ccMinor) {
  WorkspaceSizes w;
  w.cublas = ccMajor == 9 && ccMinor == 0 ? uint64_t{4096} * 8 * 1024 : (uint64_t{4096} * 2 + 16 * 8) * 1024;
  if (cublasConfig && *cublasConfig) {
    // PyTorch's reading: every ":SIZE:COUNT" found, left to right, adds
    // SIZE KiB x COUNT; none found leaves the default.
    std::string s(cublasConfig);
    uint64_t total = 0;
    bool any = false;
    for (size_t i = 0; i < s.size();) {
      size_t j = i;
      uint64_t size = 0, count = 0;
      if (s[j] == ':' && number(s, ++j, size) && j < s.size() && s[j] == ':' && number(s, ++j, count)) {
        total += size * 1024 * count;
        any = true;
        i = j;
      } else {
        ++i;
      }
    }
    if (any) w.cublas = total;
  }
  uint64_t lt = 1024 * 1024;
  if (ltKib && *ltKib && !whole(ltKib, 1024, lt)) lt = 1024 * 1024;
  if (hostjitBytes && *hostjitBytes && !whole(hostjitBytes, 1, w.cublas))
    w.error = std::string("HOSTJIT_MATMUL_WORKSPACE=") + hostjitBytes + ": expected a number of bytes (0: none)";
  w.lt = std::min(lt, w.cublas);
  return w;
}

}  // namespace hj
