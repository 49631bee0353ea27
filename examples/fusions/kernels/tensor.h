// tensor.h - the tensor-struct kernel parameter: a data pointer, then sizes and strides (in elements).
#pragma once

#include <stdint.h>

// Passed by value, laid out as the runtime packs HJ_PARAM_TENSOR | N << 8
// (8 + 16 * N bytes). A stride of 0 is an expanded (broadcast) dimension.
template <class T, int N>
struct Tensor {
  T *data;
  int64_t sizes[N];
  int64_t strides[N];
};
