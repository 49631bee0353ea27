// types.h - element types, scalar types, tensor and kernel parameter types.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hostjit/runtime.h"

namespace hostjit {

// Element types; values equal the runtime's hj_dtype.
enum class DType : uint8_t {
#define HJ_DTYPE(name, ident, code, bits, kind) ident,
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
};

const char *dtypeName(DType t);
std::optional<DType> parseDType(std::string_view s);
uint32_t dtypeBytes(DType t);
uint8_t dlpackCode(DType t);
uint8_t dlpackBits(DType t);
bool isFloat(DType t);
bool isInteger(DType t);  // signed or unsigned, not bool
// The types a scalar value may have: i64, i32, f32, f64, bool.
bool isScalarType(DType t);

constexpr int64_t kDynamic = -1;  // a `?` dim
constexpr uint32_t kMaxRank = HJ_MAX_RANK;

// A tensor type in a signature: dtype and dims, each a size or kDynamic.
struct TensorType {
  DType dtype = DType::f32;
  std::vector<int64_t> dims;
  bool operator==(const TensorType &) const = default;
};

// A kernel parameter: a tensor's data pointer (`ptr<f32>`), a tensor struct
// (`tensor<f32, 2>`: data pointer, sizes, strides, as nvFuser kernels take
// them; see HJ_PARAM_TENSOR) or a scalar.
struct ParamType {
  bool isPointer = false;
  DType dtype = DType::f32;
  bool isStruct = false;  // tensor<dtype, rank>
  uint32_t rank = 0;
  bool operator==(const ParamType &) const = default;
  bool isTensor() const { return isPointer || isStruct; }
};

// The bytes a buffer with these extents and element strides (empty:
// contiguous) takes, as the runtime counts them: an extent of 0 takes
// none, a dim of stride 0 is expanded. false when they are more than
// HJ_MAX_BUFFER_BYTES (the size overflows). Extents and strides are >= 0.
bool bufferBytes(const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides, uint32_t elementBytes,
                 uint64_t *out);

// The bytes of a dense array of this shape (0 with a zero dim). false when
// the product of its non-zero dims times elementBytes is more than `limit`:
// such a shape is refused even beside a zero dim, as NumPy refuses it, and
// so every stride of it fits i64.
// Inline: every call checks each of its tensor arguments with it.
inline bool denseBytes(std::span<const int64_t> shape, uint64_t elementBytes, uint64_t limit, uint64_t *out) {
  uint64_t bytes = elementBytes;
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0) empty = true;
    else if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return false;
  }
  *out = empty ? 0 : bytes;
  return bytes <= limit;
}

std::string toString(const TensorType &t);
std::string toString(const ParamType &t);
int32_t paramKind(const ParamType &t);  // hj_param_kind

}  // namespace hostjit
