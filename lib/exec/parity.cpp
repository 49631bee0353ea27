// parity.cpp - compares records and outputs of two runs of one program.
#include "hostjit/exec/parity.h"

#include <cstring>

namespace hostjit {

namespace {

// The record without the zeroed arena's growth: memory provisioning that
// depends on what the context held before (and that graph mode does once
// per signature, unrecorded), not on the program's calls.
std::vector<std::string> calls(const std::vector<std::string> &r) {
  std::vector<std::string> out;
  out.reserve(r.size());
  for (const std::string &l : r)
    if (l.rfind("memset #0 %arena ", 0) != 0) out.push_back(l);
  return out;
}

}  // namespace

std::optional<std::string> compareRecords(const std::vector<std::string> &recordA, const std::vector<std::string> &recordB,
                                          const char *nameA, const char *nameB) {
  const std::vector<std::string> a = calls(recordA), b = calls(recordB);
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string none = "(no call)";
    const std::string &x = i < a.size() ? a[i] : none;
    const std::string &y = i < b.size() ? b[i] : none;
    if (x != y)
      return "record line " + std::to_string(i + 1) + " differs:\n  " + nameA + ": " + x + "\n  " + nameB + ": " + y;
  }
  return std::nullopt;
}

std::optional<std::string> compareOutputs(const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
  if (a.size() != b.size())
    return "output counts differ: " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::string which = "output " + std::to_string(i) + ": ";
    if (a[i].dtype() != b[i].dtype()) return which + "dtypes differ";
    if (a[i].sizes() != b[i].sizes()) return which + "shapes differ";
    if (a[i].strides() != b[i].strides()) return which + "strides differ";
    auto ha = a[i].toHost(), hb = b[i].toHost();
    if (!ha) return which + ha.error().message;
    if (!hb) return which + hb.error().message;
    if (*ha != *hb) {
      size_t k = 0;
      while ((*ha)[k] == (*hb)[k]) ++k;
      return which + "bytes differ first at byte " + std::to_string(k) + " (element " +
             std::to_string(k / dtypeBytes(a[i].dtype())) + ")";
    }
  }
  return std::nullopt;
}

}  // namespace hostjit
