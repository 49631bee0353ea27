// nvrtc_headers.cpp - the library headers given to NVRTC (see nvrtc_headers.h).
#include "cuda/nvrtc_headers.h"

namespace hj {

namespace {

const char *kStdint = R"(// stdint.h - fixed-width integer types for NVRTC, given by hostjit.
#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
typedef signed char int_least8_t;
typedef short int_least16_t;
typedef int int_least32_t;
typedef long int_least64_t;
typedef unsigned char uint_least8_t;
typedef unsigned short uint_least16_t;
typedef unsigned int uint_least32_t;
typedef unsigned long uint_least64_t;
typedef signed char int_fast8_t;
typedef long int_fast16_t;
typedef long int_fast32_t;
typedef long int_fast64_t;
typedef unsigned char uint_fast8_t;
typedef unsigned long uint_fast16_t;
typedef unsigned long uint_fast32_t;
typedef unsigned long uint_fast64_t;
#define INT8_MIN (-128)
#define INT16_MIN (-32768)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807L - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615UL
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#define INTMAX_MIN INT64_MIN
#define INTMAX_MAX INT64_MAX
#define UINTMAX_MAX UINT64_MAX
#define PTRDIFF_MIN INT64_MIN
#define PTRDIFF_MAX INT64_MAX
#define SIZE_MAX UINT64_MAX
#define INT8_C(c) c
#define INT16_C(c) c
#define INT32_C(c) c
#define INT64_C(c) c##L
#define UINT8_C(c) c
#define UINT16_C(c) c
#define UINT32_C(c) c##U
#define UINT64_C(c) c##UL
#define INTMAX_C(c) c##L
#define UINTMAX_C(c) c##UL
)";

const char *kCstdint = R"(// cstdint - fixed-width integer types for NVRTC, given by hostjit.
#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
using ::int_least8_t; using ::int_least16_t; using ::int_least32_t; using ::int_least64_t;
using ::uint_least8_t; using ::uint_least16_t; using ::uint_least32_t; using ::uint_least64_t;
using ::int_fast8_t; using ::int_fast16_t; using ::int_fast32_t; using ::int_fast64_t;
using ::uint_fast8_t; using ::uint_fast16_t; using ::uint_fast32_t; using ::uint_fast64_t;
}
)";

const char *kFloat = R"(// float.h - the characteristics of float and double for NVRTC, given by hostjit.
#pragma once
#define FLT_RADIX 2
#define FLT_ROUNDS 1
#define FLT_EVAL_METHOD 0
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_DECIMAL_DIG 9
#define DBL_DECIMAL_DIG 17
#define DECIMAL_DIG 17
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_MAX 3.40282346638528859812e+38F
#define DBL_MAX 1.79769313486231570815e+308
#define FLT_EPSILON 1.1920928955078125e-07F
#define DBL_EPSILON 2.22044604925031308085e-16
#define FLT_MIN 1.17549435082228750797e-38F
#define DBL_MIN 2.22507385850720138309e-308
#define FLT_TRUE_MIN 1.40129846432481707092e-45F
#define DBL_TRUE_MIN 4.94065645841246544177e-324
#define FLT_HAS_SUBNORM 1
#define DBL_HAS_SUBNORM 1
)";

const char *kCfloat = R"(// cfloat - float.h for NVRTC, given by hostjit.
#pragma once
#include <float.h>
)";

const char *kLimits = R"(// limits.h - the ranges of the integer types for NVRTC (x86-64 Linux), given by hostjit.
#pragma once
#define CHAR_BIT 8
#define MB_LEN_MAX 16
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L - 1)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
)";

const char *kClimits = R"(// climits - limits.h for NVRTC, given by hostjit.
#pragma once
#include <limits.h>
)";

const char *kStddef = R"(// stddef.h - size_t, ptrdiff_t, NULL and offsetof for NVRTC, given by hostjit.
#pragma once
typedef decltype(sizeof(0)) size_t;
typedef decltype((char *)0 - (char *)0) ptrdiff_t;
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) ((size_t)((char *)&(((type *)0)->member) - (char *)0))
#endif
)";

const char *kCstddef = R"(// cstddef - stddef.h in namespace std for NVRTC, given by hostjit.
#pragma once
#include <stddef.h>
namespace std {
using ::size_t;
using ::ptrdiff_t;
typedef decltype(nullptr) nullptr_t;
enum class byte : unsigned char {};
}
)";

const char *kMath = R"(// math.h - the constants of math.h for NVRTC, given by hostjit. The math
// functions themselves are built into NVRTC.
#pragma once
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
)";

const char *kCmath = R"(// cmath - math.h, and std:: names for NVRTC's built-in math functions, given by hostjit.
#pragma once
#include <math.h>
namespace std {
using ::abs; using ::fabs; using ::fmod; using ::remainder; using ::fma; using ::fmax; using ::fmin;
using ::fdim; using ::exp; using ::exp2; using ::expm1; using ::log; using ::log10; using ::log2;
using ::log1p; using ::pow; using ::sqrt; using ::cbrt; using ::hypot; using ::sin; using ::cos;
using ::tan; using ::asin; using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh;
using ::tanh; using ::asinh; using ::acosh; using ::atanh; using ::erf; using ::erfc; using ::tgamma;
using ::lgamma; using ::ceil; using ::floor; using ::trunc; using ::round; using ::nearbyint;
using ::rint; using ::lround; using ::llround; using ::lrint; using ::llrint; using ::frexp;
using ::ldexp; using ::modf; using ::scalbn; using ::ilogb; using ::logb; using ::nextafter;
using ::copysign; using ::isfinite; using ::isinf; using ::isnan; using ::signbit;
}
)";

// No include guard: assert.h may be included again after NDEBUG changes.
const char *kAssert = R"(// assert.h for NVRTC, given by hostjit. NVRTC defines assert itself; this
// lets sources include the header, and NDEBUG turns assert off.
#ifdef NDEBUG
#undef assert
#define assert(e) ((void)0)
#endif
)";

const char *kCassert = R"(// cassert - assert.h for NVRTC, given by hostjit.
#include <assert.h>
)";

}  // namespace

const std::vector<std::pair<std::string, std::string>> &nvrtcHeaders() {
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"stdint.h", kStdint}, {"cstdint", kCstdint}, {"float.h", kFloat},   {"cfloat", kCfloat},
      {"limits.h", kLimits}, {"climits", kClimits}, {"stddef.h", kStddef}, {"cstddef", kCstddef},
      {"math.h", kMath},     {"cmath", kCmath},     {"assert.h", kAssert}, {"cassert", kCassert}};
  return headers;
}

bool isNvrtcHeader(const std::string &name) {
  for (const auto &h : nvrtcHeaders())
    if (h.first == name) return true;
  return false;
}

}  // namespace hj
