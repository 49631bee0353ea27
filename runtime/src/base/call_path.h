// call_path.h - the runtime calls of a program, dispatched once per call to
// the path of the context's mode: eager (the calls happen: core/eager_path),
// trace or replay (graph mode learns the program, or collects its work into
// a graph: graph/graph_paths). The entry points (api/) check their arguments,
// then hand the call to the context's path; no other code tests the mode.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "hostjit/fields.h"
#include "hostjit/runtime.h"

namespace hj {

// hj_alloc, checked: bytes computed from the extents and strides.
struct AllocCall {
  const int64_t *sizes = nullptr, *strides = nullptr;
  uint32_t rank = 0, dtype = 0, flags = 0;
  uint64_t bytes = 0;
  const char *name = "";
};

// hj_launch, checked: the kernel is in the table, the dims and params valid.
struct LaunchCall {
  const hj_kernel_table *table = nullptr;
  uint32_t kernel = 0;
  const int64_t *dims = nullptr;  // grid xyz, block xyz, smem
  void **params = nullptr;
  const char *site = "";          // where the launch is, for messages ("" when not given)
};

// hj_collective, checked: `what` names the call and its site; `bytes` is
// what it adds to hj_stats.collective_bytes, `recordBytes` what its record
// entry says.
struct CollectiveCall {
  uint32_t kind = 0;
  const void *src = nullptr;
  void *dst = nullptr;
  uint64_t count = 0;
  uint32_t dtype = 0, op = 0;
  int32_t peer = 0;
  uint64_t bytes = 0, recordBytes = 0;
  const std::string *what = nullptr;
  const char *site = "";  // the statement alone ("" when not given)
};

// hj_matmul, checked (the operands agree, the dtypes a supported pair,
// every column stride 1): per batch, C = alpha op(A) op(B) + beta C
// (+ bias). Strides in elements: A's, B's and C's batch (0: one matrix for
// every batch) and row strides, as stored. Its fields are listed once
// (HOSTJIT_FIELDS): graph mode compares and keys every one that is not an
// address or the site (test_trace_replay.cpp changes each).
struct MatmulCall {
  using Strides = std::array<int64_t, 3>;  // A's, B's and C's
  HOSTJIT_FIELDS((const void *, a), (const void *, b), (const void *, bias), (void *, c), (void *, workspace),
                 (int64_t, batch, 1), (int64_t, m, 1), (int64_t, n, 1), (int64_t, k, 1), (Strides, batchStride),
                 (Strides, rowStride), (uint64_t, workspaceBytes),
                 (uint32_t, aType),  // hj_dtype of A and B
                 (uint32_t, cType),  // hj_dtype of C (and bias)
                 (uint32_t, flags),  // HJ_MM_*
                 (double, alpha, 1), (double, beta), (const char *, site, ""))
};

// hj_custom_call, checked: entry `callee` of the table is a custom call;
// params as a LaunchCall's.
struct CustomCall {
  const hj_kernel_table *table = nullptr;
  uint32_t callee = 0;
  void **params = nullptr;
  const char *site = "";
};

class CallPath {
 public:
  virtual ~CallPath() = default;
  // The stream the program is on, which records name.
  virtual uint32_t stream() const = 0;
  virtual int32_t alloc(const AllocCall &c, void **out) = 0;
  // hj_free; onError: hj_free_on_error (a pointer that is no buffer is ignored).
  virtual int32_t free(void *ptr, bool onError) = 0;
  // The end of hj_free_all_on_error, after the frees: the program's error
  // path leaves its streams and groups.
  virtual void afterError() = 0;
  virtual int32_t launch(const LaunchCall &c) = 0;
  virtual int32_t setStream(uint32_t stream) = 0;
  virtual int32_t recordUse(void *ptr) = 0;
  virtual int32_t event(uint32_t event, bool wait) = 0;
  virtual int32_t streamSync() = 0;
  virtual int32_t collective(const CollectiveCall &c) = 0;
  virtual int32_t matmul(const MatmulCall &c) = 0;
  virtual int32_t customCall(const CustomCall &c) = 0;
  // Whether a failure of this path will be undone by running the call again
  // eagerly (a replay that found the program's calls differ): then nothing
  // reached the other ranks, and the communicator is left as it is.
  virtual bool rerunsOnFailure() const { return false; }
  // Whether, before a failed collective aborts the communicator, the path
  // drops the context's graphs that communicate itself (graph mode's paths
  // do, in GraphCache::abortComm: NCCL's abort waits for the graphs its work
  // was captured into); if not, the caller drops them.
  virtual bool dropsGraphsOnAbort() const { return false; }
};

}  // namespace hj
