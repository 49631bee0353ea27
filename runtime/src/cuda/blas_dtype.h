// blas_dtype.h - the CUDA data type cuBLAS and cuBLASLt take for a matmul
// operand's hj_dtype (f32, f16 or bf16: what hj_matmul accepts).
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <library_types.h>

#include <cstdint>

#include "hostjit/runtime.h"

namespace hj {

inline cudaDataType_t blasType(uint32_t dtype) {
  return dtype == HJ_DTYPE_f16 ? CUDA_R_16F : dtype == HJ_DTYPE_bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
