// runtime_handles.h - C++ handles that own the C runtime's objects: Runtime
// (a context), KernelTable (a program's kernels on it) and Tensor (an owning
// output).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/ir/error.h"
#include "hostjit/exec/plan.h"
#include "hostjit/runtime.h"
#include "hostjit/ir/types.h"

namespace hostjit {

// Turns the calling thread's last runtime error into an Error.
Error runtimeError(int32_t status);

class Runtime {
 public:
  static Expected<std::shared_ptr<Runtime>> create(const hj_options &options);
  static Expected<std::shared_ptr<Runtime>> create();  // host backend, defaults
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  hj_context *context() const { return ctx_; }
  hj_stats stats() const;
  DLDevice device() const;
  // The call record, one line per call (hj_record_format).
  std::vector<std::string> recordLines() const;
  // A profiling runtime's profile (hj_profile_count, hj_profile_get): waits
  // for the profiled work. The rows' strings live until the profile is
  // cleared. An error when the runtime does not profile (hj_options.profile).
  Expected<std::vector<hj_profile_row>> profile() const;
  // Writes its trace as a Chrome Trace Event file (hj_trace_write).
  Expected<void> writeTrace(const std::string &path) const;

 private:
  explicit Runtime(hj_context *ctx) : ctx_(ctx) {}
  hj_context *ctx_;
};

// A program's kernels resolved for one runtime (loaded once, never per call).
class KernelTable {
 public:
  static Expected<std::shared_ptr<KernelTable>> load(const std::shared_ptr<Runtime> &rt, const Plan &plan);
  ~KernelTable();
  const hj_kernel_table *get() const { return table_; }

 private:
  explicit KernelTable(hj_kernel_table *t) : table_(t) {}
  hj_kernel_table *table_;
};

// A tensor in a runtime's memory, owned by the caller: a program's output,
// returned to the runtime's pool when dropped (or when the DLManagedTensor
// made from it is deleted), or an input made with fromHost.
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Runtime> rt, void *data, DType dtype, uint32_t rank, const int64_t *sizes,
         const int64_t *strides);
  // An input made from host data, on whatever backend the runtime has (host
  // or CUDA memory): `bytes` of row-major `data` copied into a buffer of its
  // own (not the pool's, so the runtime's stats do not count it), freed with
  // the Tensor. Errors: a rank over 8, a negative size, `bytes` other than
  // the shape's, or the allocation or copy failing.
  static Expected<Tensor> fromHost(const std::shared_ptr<Runtime> &rt, DType dtype, std::vector<int64_t> sizes,
                                   const void *data, size_t bytes);
  // The same for a vector of elements, its DType taken from T (float f32,
  // double f64, int32_t i32, int64_t i64, uint8_t u8, ...).
  template <class T>
  static Expected<Tensor> fromHost(const std::shared_ptr<Runtime> &rt, std::vector<int64_t> sizes,
                                   const std::vector<T> &data);
  ~Tensor();
  Tensor(Tensor &&o) noexcept;
  Tensor &operator=(Tensor &&o) noexcept;
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;

  void *data() const { return data_; }
  DType dtype() const { return dtype_; }
  uint32_t rank() const { return rank_; }
  int64_t size(uint32_t d) const { return sizes_[d]; }
  int64_t stride(uint32_t d) const { return strides_[d]; }
  std::vector<int64_t> sizes() const { return {sizes_.begin(), sizes_.begin() + rank_}; }
  std::vector<int64_t> strides() const { return {strides_.begin(), strides_.begin() + rank_}; }
  // Elements spanned in memory (expanded dims count once).
  int64_t storageElements() const;
  // A view that stays valid while this Tensor lives.
  DLTensor dl();
  // Gives up ownership to a DLManagedTensor whose deleter frees the buffer.
  DLManagedTensor *release();
  // Copies storageElements() elements to host memory.
  Expected<std::vector<unsigned char>> toHost() const;

 private:
  void reset();
  std::shared_ptr<Runtime> rt_;
  void *data_ = nullptr;
  DType dtype_ = DType::f32;
  uint32_t rank_ = 0;
  std::array<int64_t, kMaxRank> sizes_{}, strides_{};
  bool pooled_ = true;  // from the pool (hj_free), else hj_buffer_alloc (hj_buffer_free)
};

namespace detail {
template <class T>
constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::i8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::i16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::i64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::u8;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::u32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::u64;
  else static_assert(sizeof(T) == 0, "Tensor::fromHost: no DType for this element type");
}
}  // namespace detail

template <class T>
Expected<Tensor> Tensor::fromHost(const std::shared_ptr<Runtime> &rt, std::vector<int64_t> sizes,
                                  const std::vector<T> &data) {
  return fromHost(rt, detail::dtypeOf<T>(), std::move(sizes), data.data(), data.size() * sizeof(T));
}

// Builds the output Tensors of a call from the buffers and sizes a program
// wrote (out_dims: each output's sizes, then its explicit strides if any).
std::vector<Tensor> makeOutputs(const std::shared_ptr<Runtime> &rt, const Plan &plan, void *const *data,
                                const int64_t *dims);
// The number of int64 slots makeOutputs reads from dims.
size_t outputDimSlots(const Plan &plan);

}  // namespace hostjit
