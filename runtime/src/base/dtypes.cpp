// dtypes.cpp - element type names and fill patterns, argument sizes.
#include "base/dtypes.h"

#include "hostjit/runtime.h"

namespace hj {

const char *dtypeName(uint32_t d) {
  static const char *names[] = {
#define HJ_DTYPE(name, ident, code, bits, kind) #name,
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
  };
  return d < HJ_DTYPE_COUNT ? names[d] : "?";
}

uint64_t nanPattern(uint32_t dtype) {
  switch (dtype) {
    case HJ_DTYPE_f16: return 0x7E00;
    case HJ_DTYPE_bf16: return 0x7FC0;
    case HJ_DTYPE_f32: return 0x7FC00000u;
    case HJ_DTYPE_f64: return 0x7FF8000000000000ull;
    case HJ_DTYPE_i8: return 0x7F;
    case HJ_DTYPE_i16: return 0x7FFF;
    case HJ_DTYPE_i32: return 0x7FFFFFFFu;
    case HJ_DTYPE_i64: return 0x7FFFFFFFFFFFFFFFull;
    case HJ_DTYPE_u8: return 0xFF;
    case HJ_DTYPE_u32: return 0xFFFFFFFFu;
    case HJ_DTYPE_u64: return ~0ull;
    case HJ_DTYPE_bool: return 1;
  }
  return 0;
}

uint32_t paramBytes(int32_t kind) {
  if ((kind & 0xff) == HJ_PARAM_TENSOR)
    return hj_param_rank(kind) <= HJ_MAX_RANK ? 8 + 16 * hj_param_rank(kind) : 0;
  switch (kind) {
    case HJ_PARAM_PTR: return sizeof(void *);
    case HJ_PARAM_I32: return 4;
    case HJ_PARAM_I64: return 8;
    case HJ_PARAM_F32: return 4;
    case HJ_PARAM_F64: return 8;
    case HJ_PARAM_BOOL: return 1;
  }
  return 0;
}

}  // namespace hj
