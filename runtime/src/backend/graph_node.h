// graph_node.h - one operation of a graph (graph mode) as a backend builds
// it: a variant of one struct per kind (graph_ops.def), its program stream
// and the earlier nodes it waits for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <variant>

#include "base/call_path.h"
#include "hostjit/runtime.h"

namespace hj {

struct KernelEntry;
struct CollectivePart;
class Comm;

// Zeroes `bytes` at ptr.
struct MemsetNode {
  void *ptr = nullptr;
  size_t bytes = 0;
};
// Fills bytes/width elements at ptr with `pattern` (width 1, 2, 4 or 8 bytes).
struct FillNode {
  void *ptr = nullptr;
  size_t bytes = 0;
  uint64_t pattern = 0;
  unsigned width = 0;
};
// A kernel launch: one pointer per declared parameter (the values are copied).
struct KernelNode {
  const KernelEntry *kernel = nullptr;
  hj_dim3 grid{}, block{};
  uint32_t smem = 0;
  void **params = nullptr;
};
// `numParts` calls of `comm`, part i reading buffers[2i] and writing
// buffers[2i + 1] (copied, like kernel arguments); on CUDA a child graph
// captured from the communicator's calls.
struct CollectiveNode {
  Comm *comm = nullptr;
  const CollectivePart *parts = nullptr;
  uint32_t numParts = 0;
  void *const *buffers = nullptr;
};
// A matmul: the call (its pointers ignored) and buffers[0..4], its A, B, C,
// bias and workspace (copied); on CUDA a child graph captured from the
// library's calls.
struct LibraryNode {
  const MatmulCall *matmul = nullptr;
  void *const *buffers = nullptr;
};
// A custom call (params as a kernel's), captured on CUDA into a child graph
// from the function's stream work.
struct CustomNode {
  const KernelEntry *kernel = nullptr;
  void **params = nullptr;
  const char *site = "";  // the statement, for messages
};

enum class GraphOpKind : uint8_t {
#define HJ_GRAPH_OP(kind, node, planned) kind,
#include "backend/graph_ops.def"
#undef HJ_GRAPH_OP
};

using GraphOp = std::variant<MemsetNode, FillNode, KernelNode, CollectiveNode, LibraryNode, CustomNode>;

#define HJ_GRAPH_OP(kind, node, planned)                                                                  \
  static_assert(std::is_same_v<std::variant_alternative_t<size_t(GraphOpKind::kind), GraphOp>, node>, \
                "GraphOp lists " #node " where graph_ops.def puts it");
#include "backend/graph_ops.def"
#undef HJ_GRAPH_OP
static_assert(std::variant_size_v<GraphOp> == size_t(GraphOpKind::Custom) + 1, "GraphOp and graph_ops.def differ");

// For std::visit with one lambda per kind.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// One operation of a graph. It runs after the operations named in deps
// (indices of earlier nodes); nodes without an edge between them may run
// concurrently.
struct GraphNode {
  using Kind = GraphOpKind;
  GraphOp op;
  uint32_t stream = 0;  // the program's stream the operation was on
  const uint32_t *deps = nullptr;
  uint32_t numDeps = 0;
  Kind kind() const { return Kind(op.index()); }
};

}  // namespace hj
