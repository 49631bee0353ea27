// dtypes.h - what the runtime knows of each element type beyond its size.
#pragma once

#include <cstdint>

namespace hj {

// The dtype's name in the text format ("f32"), or "?".
const char *dtypeName(uint32_t dtype);
// The HOSTJIT_FILL_NAN pattern of a dtype (contract point 6): NaN for
// floats, the maximum for signed integers, all ones for unsigned, true for bool.
uint64_t nanPattern(uint32_t dtype);

}  // namespace hj
