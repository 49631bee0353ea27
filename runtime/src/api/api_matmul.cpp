// api_matmul.cpp - hj_matmul: a matrix multiply as a library call, checked
// here whatever the backend and mode, then made by the context's call path.
#include <cinttypes>
#include <cmath>

#include "base/dtypes.h"
#include "base/fake_address.h"
#include "base/error.h"
#include "core/context.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

namespace {

bool floatInput(uint32_t t) { return t == HJ_DTYPE_f32 || t == HJ_DTYPE_f16 || t == HJ_DTYPE_bf16; }

using Bytes = unsigned __int128;  // spans of up to 2^62 elements never overflow it

// The bytes operand x of dims spans from its first element (x: 0 A, 1 B, 2 C).
Bytes spanBytes(const int64_t *d, int x, uint32_t dtype) {
  const int64_t *o = d + 6 * x;
  return (Bytes(o[0] - 1) * Bytes(o[3]) + Bytes(o[1] - 1) * Bytes(o[4]) + Bytes(o[2])) * hj_dtype_size(dtype);
}

// Whether two operands share memory. Graph mode traces with fake addresses
// (base/fake_address.h), never a real one's: an allocation's views are its
// address plus their offsets, and allocations are far apart, so fake
// addresses compare as real ones do.
bool overlaps(const void *p, Bytes pBytes, const void *q, Bytes qBytes) {
  if (pBytes == 0 || qBytes == 0) return false;
  size_t pi = 0, qi = 0;
  if (hj::fakeIndex(p, &pi) != hj::fakeIndex(q, &qi)) return false;
  Bytes x = reinterpret_cast<uintptr_t>(p), y = reinterpret_cast<uintptr_t>(q);
  return x < y + qBytes && y < x + pBytes;
}

// C is written while A, B and the bias are read: a C whose memory overlaps
// one of theirs gives wrong products on every backend, so it is refused.
int32_t checkOverlap(const void *a, const void *b, const void *c, const void *bias, const int64_t *d,
                     const hj::MatmulCall &m, const char *where) {
  Bytes cBytes = spanBytes(d, 2, m.cType);
  const char *reader = overlaps(c, cBytes, a, spanBytes(d, 0, m.aType))   ? "A"
                       : overlaps(c, cBytes, b, spanBytes(d, 1, m.aType)) ? "B"
                       : bias && overlaps(c, cBytes, bias, Bytes(m.n) * hj_dtype_size(m.cType))
                           ? "the bias"
                           : nullptr;
  if (!reader) return 0;
  return hj::fail(HJ_ERR_INVALID_ARGUMENT,
                  "%s: C's memory overlaps %s's; a matmul reads %s while it writes C, so C must be a buffer of its own",
                  where, reader, reader);
}

}  // namespace

extern "C" int32_t hj_matmul(hj_context *ctx, const void *a, const void *b, void *c, const void *bias,
                             void *workspace, const int64_t *dims, uint32_t dtypes, uint32_t flags, double alpha,
                             double beta, const char *site) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_matmul")) return st;
    const char *where = site && *site ? site : "hj_matmul";
    if (!dims) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: dims is NULL", where);
    hj::MatmulCall m;
    const int64_t *d = dims;
    m.aType = dtypes & 0xff;
    m.cType = (dtypes >> 8) & 0xff;
    if (!floatInput(m.aType))
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: A and B are %s; a matmul takes f32, f16 or bf16", where,
                  hj::dtypeName(m.aType));
    if (m.cType != HJ_DTYPE_f32 && m.cType != m.aType)
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: C is %s; with %s inputs it must be f32 or %s", where,
                  hj::dtypeName(m.cType), hj::dtypeName(m.aType), hj::dtypeName(m.aType));
    if (flags & ~uint32_t(HJ_MM_TRANSPOSE_A | HJ_MM_TRANSPOSE_B | HJ_MM_BIAS))
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", where, flags);
    static const char *matrix[] = {"A", "B", "C"};
    for (int x = 0; x < 3; ++x) {
      const int64_t *o = d + 6 * x;  // batches, rows, cols, batch, row and column strides
      for (int i = 0; i < 3; ++i)
        if (o[i] < 1 || o[i] > (int64_t(1) << 40))
          return fail(HJ_ERR_INVALID_ARGUMENT, "%s: %s has %" PRId64 " %s, expected 1 to 2^40", where, matrix[x], o[i],
                      i == 0 ? "batches" : i == 1 ? "rows" : "columns");
      if (o[5] != 1)
        return fail(HJ_ERR_INVALID_ARGUMENT,
                    "%s: %s's column stride is %" PRId64 "; a matmul needs each row's elements adjacent (stride 1)",
                    where, matrix[x], o[5]);
      if (o[3] < 0 || o[4] < 0) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: %s has a negative stride", where, matrix[x]);
      if (o[1] > 1 && o[4] < o[2])
        return fail(HJ_ERR_INVALID_ARGUMENT,
                    "%s: %s is %" PRId64 " x %" PRId64 " with a row stride of %" PRId64 "; its rows would overlap",
                    where, matrix[x], o[1], o[2], o[4]);
      __int128 span = __int128(o[0] - 1) * o[3] + __int128(o[1] - 1) * o[4] + o[2];
      if (span > (__int128(1) << 62))
        return fail(HJ_ERR_INVALID_ARGUMENT, "%s: %s spans more than 2^62 elements", where, matrix[x]);
    }
    bool ta = flags & HJ_MM_TRANSPOSE_A, tb = flags & HJ_MM_TRANSPOSE_B;
    m.m = ta ? d[HJ_MM_A_COLS] : d[HJ_MM_A_ROWS];
    m.k = ta ? d[HJ_MM_A_ROWS] : d[HJ_MM_A_COLS];
    int64_t bk = tb ? d[HJ_MM_B_COLS] : d[HJ_MM_B_ROWS];
    m.n = tb ? d[HJ_MM_B_ROWS] : d[HJ_MM_B_COLS];
    if (bk != m.k)
      return fail(HJ_ERR_INVALID_ARGUMENT,
                  "%s: op(A) is %" PRId64 " x %" PRId64 " and op(B) is %" PRId64 " x %" PRId64
                  ": A's columns must be B's rows",
                  where, m.m, m.k, bk, m.n);
    if (d[HJ_MM_C_ROWS] != m.m || d[HJ_MM_C_COLS] != m.n)
      return fail(HJ_ERR_INVALID_ARGUMENT,
                  "%s: C is %" PRId64 " x %" PRId64 "; op(A) op(B) is %" PRId64 " x %" PRId64, where, d[HJ_MM_C_ROWS],
                  d[HJ_MM_C_COLS], m.m, m.n);
    m.batch = d[HJ_MM_C_BATCHES];
    for (int x = 0; x < 2; ++x)
      if (d[6 * x] != 1 && d[6 * x] != m.batch)
        return fail(HJ_ERR_INVALID_ARGUMENT,
                    "%s: %s has %" PRId64 " batches and C %" PRId64 "; each operand has C's batches, or one", where,
                    matrix[x], d[6 * x], m.batch);
    if (m.batch > 1 && d[HJ_MM_C_BATCH_STRIDE] < m.m * d[HJ_MM_C_ROW_STRIDE])
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: C's batch stride %" PRId64 " would make its batches overlap", where,
                  d[HJ_MM_C_BATCH_STRIDE]);
    for (int x = 0; x < 3; ++x) {
      m.batchStride[x] = d[6 * x] == 1 ? 0 : d[6 * x + 3];
      m.rowStride[x] = d[6 * x + 4];
    }
    if ((flags & HJ_MM_BIAS) && d[HJ_MM_BIAS_ELEMS] != m.n)
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: the bias has %" PRId64 " elements; C has %" PRId64 " columns", where,
                  d[HJ_MM_BIAS_ELEMS], m.n);
    // Every backend reads the bias as n adjacent elements.
    if ((flags & HJ_MM_BIAS) && m.n > 1 && d[HJ_MM_BIAS_STRIDE] != 1)
      return fail(HJ_ERR_INVALID_ARGUMENT,
                  "%s: the bias has a stride of %" PRId64 "; a matmul reads its %" PRId64
                  " elements adjacent (stride 1): give it a contiguous copy",
                  where, d[HJ_MM_BIAS_STRIDE], m.n);
    if (!a || !b || !c) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: %s is NULL", where, !a ? "A" : !b ? "B" : "C");
    if ((flags & HJ_MM_BIAS) && !bias) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: the bias is NULL", where);
    if (d[HJ_MM_WORKSPACE_BYTES] < 0 || (d[HJ_MM_WORKSPACE_BYTES] > 0 && !workspace))
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: a workspace of %" PRId64 " bytes at %p", where,
                  d[HJ_MM_WORKSPACE_BYTES], workspace);
    if (int32_t st = checkOverlap(a, b, c, flags & HJ_MM_BIAS ? bias : nullptr, d, m, where)) return st;
    if (!std::isfinite(alpha) || !std::isfinite(beta))
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: alpha %g and beta %g must be finite", where, alpha, beta);
    m.workspaceBytes = static_cast<uint64_t>(d[HJ_MM_WORKSPACE_BYTES]);
    m.a = a;
    m.b = b;
    m.c = c;
    m.bias = flags & HJ_MM_BIAS ? bias : nullptr;
    m.workspace = m.workspaceBytes > 0 ? workspace : nullptr;
    m.flags = flags;
    m.alpha = alpha;
    m.beta = beta;
    m.site = where;
    return ctx->path->matmul(m);
  });
}
