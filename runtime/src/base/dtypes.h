// dtypes.h - what the runtime knows of each element type beyond its size,
// and of each kernel argument kind.
#pragma once

#include <cstdint>

namespace hj {

// The dtype's name in the text format ("f32"), or "?".
const char *dtypeName(uint32_t dtype);
// The HOSTJIT_FILL_NAN pattern of a dtype (contract point 6): NaN for
// floats, the maximum for signed integers, all ones for unsigned, true for bool.
uint64_t nanPattern(uint32_t dtype);
// Bytes of one kernel argument of an hj_param_kind (0 for an unknown kind).
uint32_t paramBytes(int32_t kind);

}  // namespace hj
