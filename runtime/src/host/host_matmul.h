// host_matmul.h - the host backend's matrix multiply: a plain loop in f32,
// for correctness on machines without a GPU (CI), not for speed.
#pragma once

#include <cstdint>

#include "base/call_path.h"

namespace hj {

// Does c (checked by hj_matmul): per batch, C = alpha op(A) op(B) + beta C
// (+ bias), each product summed in f32 in k order, f16 and bf16 read and
// written by rounding to nearest even. beta 0 never reads C (NaN stays out).
void hostMatmul(const MatmulCall &c);

}  // namespace hj
