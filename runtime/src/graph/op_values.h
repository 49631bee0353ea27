// op_values.h - what a runtime call of a graph-mode program puts into its
// planned operation, the same for the trace and the replay: a collective's
// part and addresses, a kernel node's launch dims.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "backend/backend.h"
#include "base/call_path.h"

namespace hj {

// A collective call as one part of its node, and its source and
// destination addresses (the node's values).
inline CollectivePart partOf(const CollectiveCall &c, unsigned char (&addresses)[2 * sizeof(void *)]) {
  CollectivePart part;
  part.kind = c.kind;
  part.dtype = c.dtype;
  part.op = c.op;
  part.peer = c.peer;
  part.count = c.count;
  const void *src = c.src;
  void *dst = c.dst;
  std::memcpy(addresses, &src, sizeof src);
  std::memcpy(addresses + sizeof src, &dst, sizeof dst);
  return part;
}

// Whether two calls of a struct whose fields are listed (HOSTJIT_FIELDS)
// agree in every field that is not an address (a pointer: the node's
// values, patched) or text (for messages): what a replayed call must
// repeat of the traced one.
template <class T>
bool sameValues(const T &a, const T &b) {
  static_assert(std::is_standard_layout_v<T>, "fields are found in b at a's offsets");
  bool same = true;
  a.forEachField([&](const char *, const auto &field) {
    using F = std::decay_t<decltype(field)>;
    if constexpr (!std::is_pointer_v<F> && !std::is_same_v<F, std::string>) {
      size_t at = reinterpret_cast<const char *>(&field) - reinterpret_cast<const char *>(&a);
      same = same && field == *reinterpret_cast<const F *>(reinterpret_cast<const char *>(&b) + at);
    }
  });
  return same;
}

// A custom call's launch dims: it has none.
inline constexpr int64_t kNoDims[7] = {};

// The grid a graph node of kernel k launches for `dims`: a bounds_checked
// kernel's grid rounded up to a power of two per dim (within the driver's
// limits), so that signatures whose grids round alike differ in their
// nodes' arguments only, which the driver sets for a fraction of the cost
// of a new grid (bench/RESULTS.md). The record keeps the program's dims; a
// custom call (kind Custom) has none to round.
inline const int64_t *nodeDims(GraphOpKind kind, const KernelEntry &k, const int64_t *dims, int64_t *rounded) {
  if (kind != GraphOpKind::Kernel || !(k.launchFlags & HJ_LAUNCH_BOUNDS_CHECKED)) return dims;
  std::memcpy(rounded, dims, 7 * sizeof(int64_t));
  for (int d = 0; d < 3; ++d) {
    int64_t limit = d == 0 ? INT32_MAX : 65535, g = 1;
    while (g < dims[d]) g *= 2;
    if (g <= limit) rounded[d] = g;
  }
  return rounded;
}

}  // namespace hj
