// types.cpp - names, sizes and DLPack codes of element and parameter types.
#include "hostjit/ir/types.h"

#include <cstdio>
#include <cstdlib>

#include "hostjit/ir/error.h"

namespace hostjit {
namespace {
struct Info {
  const char *name;
  uint8_t code, bits;
  char kind;
};
const Info kInfo[] = {
#define HJ_DTYPE(name, ident, code, bits, kind) {#name, code, bits, #kind[0]},
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
};
const Info &info(DType t) { return kInfo[static_cast<size_t>(t)]; }
}  // namespace

const char *dtypeName(DType t) { return info(t).name; }
std::optional<DType> parseDType(std::string_view s) {
  for (size_t i = 0; i < std::size(kInfo); ++i)
    if (s == kInfo[i].name) return static_cast<DType>(i);
  return std::nullopt;
}
uint32_t dtypeBytes(DType t) { return info(t).bits / 8; }
uint8_t dlpackCode(DType t) { return info(t).code; }
uint8_t dlpackBits(DType t) { return info(t).bits; }
bool isFloat(DType t) { return info(t).kind == 'F'; }
bool isInteger(DType t) { return info(t).kind == 'S' || info(t).kind == 'U'; }
bool isScalarType(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::f32 || t == DType::f64 || t == DType::Bool;
}

std::string toString(const TensorType &t) {
  std::string s = dtypeName(t.dtype);
  s += '[';
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) s += ", ";
    s += t.dims[i] == kDynamic ? "?" : std::to_string(t.dims[i]);
  }
  return s + ']';
}

std::string toString(const ParamType &t) {
  if (t.isStruct) return std::string("tensor<") + dtypeName(t.dtype) + ", " + std::to_string(t.rank) + ">";
  return t.isPointer ? std::string("ptr<") + dtypeName(t.dtype) + ">" : dtypeName(t.dtype);
}

int32_t paramKind(const ParamType &t) {
  if (t.isPointer) return HJ_PARAM_PTR;
  if (t.isStruct) return HJ_PARAM_TENSOR | static_cast<int32_t>(t.rank << 8);
  switch (t.dtype) {
    case DType::i32: return HJ_PARAM_I32;
    case DType::i64: return HJ_PARAM_I64;
    case DType::f32: return HJ_PARAM_F32;
    case DType::f64: return HJ_PARAM_F64;
    case DType::Bool: return HJ_PARAM_BOOL;
    default: return -1;
  }
}

void invariantFailed(const char *file, int line, const char *what) {
  std::fprintf(stderr, "hostjit: internal invariant failed at %s:%d: %s\n", file, line, what);
  std::abort();
}

bool bufferBytes(const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides, uint32_t elementBytes,
                 uint64_t *out) {
  *out = 0;
  for (int64_t s : sizes)
    if (s == 0) return true;
  uint64_t span = 1;  // elements
  bool overflow = false;
  if (!strides.empty()) {
    uint64_t last = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      uint64_t t;
      overflow |= __builtin_mul_overflow(static_cast<uint64_t>(sizes[d] - 1), static_cast<uint64_t>(strides[d]), &t);
      overflow |= __builtin_add_overflow(last, t, &last);
    }
    overflow |= __builtin_add_overflow(last, 1, &span);
  } else {
    for (int64_t s : sizes) overflow |= __builtin_mul_overflow(span, static_cast<uint64_t>(s), &span);
  }
  overflow |= __builtin_mul_overflow(span, uint64_t{elementBytes}, out);
  return !overflow && *out <= HJ_MAX_BUFFER_BYTES;
}

}  // namespace hostjit
