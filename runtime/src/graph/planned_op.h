// planned_op.h - one operation of a graph-mode trace: what it does, per
// kind (a variant over backend/graph_ops.def), its stream, dependencies
// and argument values (which replays compare and patch).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "backend/backend.h"
#include "base/call_path.h"

namespace hj {

// What one operation of the graph does, per kind (graph_ops.def).
struct PlannedMemset {
  uint32_t alloc = 0;  // the allocation it zeroes
  uint64_t bytes = 0;
};
struct PlannedFill {
  uint32_t alloc = 0;  // the allocation it fills
  uint64_t bytes = 0;
  uint64_t pattern = 0;
  unsigned width = 0;
};
struct PlannedKernel {
  const hj_kernel_table *table = nullptr;
  uint32_t kernel = 0;
  int64_t dims[7] = {};  // grid, block, shared memory
};
struct PlannedCollective {
  std::vector<CollectivePart> parts;  // its calls (a group: brackets included)
};
struct PlannedLibrary {
  MatmulCall matmul;  // the call (values: its five addresses)
};
struct PlannedCustom {
  const hj_kernel_table *table = nullptr;
  uint32_t kernel = 0;
  std::string site;  // the statement, for messages
};
using PlannedWork =
    std::variant<PlannedMemset, PlannedFill, PlannedKernel, PlannedCollective, PlannedLibrary, PlannedCustom>;
#define HJ_GRAPH_OP(kind, node, planned)                                                                         \
  static_assert(std::is_same_v<std::variant_alternative_t<size_t(GraphOpKind::kind), PlannedWork>, planned>, \
                "PlannedWork lists " #planned " where graph_ops.def puts it");
#include "backend/graph_ops.def"
#undef HJ_GRAPH_OP
static_assert(std::variant_size_v<PlannedWork> == std::variant_size_v<GraphOp>, "PlannedWork and GraphOp differ");

// One operation of the graph, in the order the program issued it.
struct PlannedOp {
  PlannedWork work;
  uint32_t stream = 0;         // the program's stream
  std::vector<uint32_t> deps;  // the operations it waits for (its stream's last, events, syncs)
  std::vector<unsigned char> values;  // Kernel, Custom: the argument values; Memset, Fill: the destination;
                                      // Collective: each part's source and destination addresses;
                                      // Library: its five addresses
  std::vector<void *> params;         // pointers into values, one per parameter
  bool dirty = false;                 // values differ from the executable graph's
  GraphOpKind kind() const { return GraphOpKind(work.index()); }
  // The kernel entry of a Kernel or Custom operation (NULL for the others).
  const KernelEntry *kernelEntry() const {
    if (const auto *k = std::get_if<PlannedKernel>(&work)) return &k->table->kernels[k->kernel];
    if (const auto *c = std::get_if<PlannedCustom>(&work)) return &c->table->kernels[c->kernel];
    return nullptr;
  }
  // The table of a Kernel or Custom operation (NULL for the others).
  const hj_kernel_table *table() const {
    if (const auto *k = std::get_if<PlannedKernel>(&work)) return k->table;
    if (const auto *c = std::get_if<PlannedCustom>(&work)) return c->table;
    return nullptr;
  }
  // A Memset's or Fill's bytes (0 for the others).
  uint64_t bytes() const {
    if (const auto *m = std::get_if<PlannedMemset>(&work)) return m->bytes;
    if (const auto *f = std::get_if<PlannedFill>(&work)) return f->bytes;
    return 0;
  }
};

}  // namespace hj
