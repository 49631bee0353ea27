// nvrtc_headers.h - the C and C++ library headers hostjit gives NVRTC, which
// ships none: what device code commonly includes for types and constants.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hj {

// (name, text) of each header: stdint.h and cstdint (fixed-width types and
// their limits), float.h and cfloat (FLT_MAX, DBL_EPSILON, ...), limits.h
// and climits (INT_MAX, CHAR_BIT, ...), stddef.h and cstddef (size_t,
// ptrdiff_t, offsetof, std::nullptr_t, std::byte), math.h and cmath (the
// M_PI family, INFINITY, NAN, HUGE_VAL, and std:: names for the math
// functions NVRTC defines at global scope), assert.h and cassert (NVRTC
// defines assert itself; these honour NDEBUG). Values are those of x86-64
// Linux, the host hostjit supports.
const std::vector<std::pair<std::string, std::string>> &nvrtcHeaders();

// Whether `name` (as written in #include <...>) is one of them.
bool isNvrtcHeader(const std::string &name);

}  // namespace hj
