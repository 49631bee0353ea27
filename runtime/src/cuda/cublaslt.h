// cublaslt.h - hj_matmul on CUDA: cuBLASLt, loaded with dlopen the first time
// a program multiplies (cublaslt_api.def lists what is used), a plan (the
// descriptors and the algorithm cuBLASLt's heuristic picks) made once per
// shape and kept, never per call.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cuda.h>

#include <array>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "base/call_path.h"

namespace hj {

// One context's cuBLASLt: its handle and its plans. Used by one thread at a
// time, with the device's context current.
class CublasLt {
 public:
  CublasLt();
  ~CublasLt();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;
  // Queues c on `stream`. Errors: HJ_ERR_NOT_FOUND "no cuBLASLt: ..." when
  // the library cannot be loaded; HJ_ERR_BACKEND naming the statement (its
  // site) and cuBLASLt's status for a call it refuses, or for a shape it
  // has no algorithm for (with the shape and the workspace given).
  int32_t matmul(const MatmulCall &c, CUstream stream, int32_t ordinal);

 private:
  struct Plan;
  // What a plan depends on: the shape, strides, workspace, dtypes, flags
  // and the operands' alignments. A fixed array, so that finding the plan
  // of a call allocates nothing.
  using Key = std::array<int64_t, 15>;
  struct KeyHash {
    size_t operator()(const Key &k) const {
      size_t h = 0;
      for (int64_t v : k) h = h * 1000003u ^ std::hash<int64_t>()(v);
      return h;
    }
  };
  void *handle_ = nullptr;  // cublasLtHandle_t, made on first use
  std::unordered_map<Key, std::unique_ptr<Plan>, KeyHash> plans_;
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
