// host_data.h - inputs made from a seed, and outputs read back, for tools,
// tests and benchmarks: random non-zero data on any runtime.
#pragma once

#include <map>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/exec/plan.h"
#include "hostjit/exec/runtime_handles.h"

namespace hostjit {

// Tensors in a runtime's memory (unpooled, unrecorded), freed on destruction.
class InputSet {
 public:
  InputSet() = default;
  ~InputSet();
  InputSet(InputSet &&) = default;
  InputSet &operator=(InputSet &&) = default;

  // Makes one tensor per plan input, with the given shapes (by input name;
  // inputs whose dims are all static may be left out), filled with random
  // non-zero values from `seed`: floats in +-[0.25, 1.25), integers in
  // [1, 100], bool true. Errors name the input.
  // `given` holds the data of some inputs by name (row-major bytes of their
  // shape in `shapes`), used instead of random values; the random stream is
  // drawn as if they were generated, so the other inputs' values do not
  // depend on which inputs are given.
  static Expected<InputSet> random(const std::shared_ptr<Runtime> &rt, const Plan &plan,
                                   const std::map<std::string, std::vector<int64_t>> &shapes, uint64_t seed,
                                   const std::map<std::string, std::vector<unsigned char>> &given = {});
  // Copies host data (one vector per input, element bytes) in.
  static Expected<InputSet> fromHost(const std::shared_ptr<Runtime> &rt, const Plan &plan,
                                     const std::vector<std::vector<int64_t>> &shapes,
                                     const std::vector<std::vector<unsigned char>> &data);

  // Copies the inputs the plan writes (PlanInput::written) back to their
  // first values, so that every call of a program that updates inputs in
  // place starts from the same data (hostjit run's modes and repeats).
  Expected<void> restoreWritten(const Plan &plan) const;

  const std::vector<const DLTensor *> &pointers() const { return ptrs_; }
  std::span<const DLTensor *const> span() const { return {ptrs_.data(), ptrs_.size()}; }
  const std::vector<unsigned char> &hostData(size_t i) const { return host_[i]; }

 private:
  std::shared_ptr<Runtime> rt_;
  std::vector<std::unique_ptr<DLTensor>> tensors_;
  std::vector<std::unique_ptr<int64_t[]>> shapes_;
  std::vector<void *> buffers_;
  std::vector<std::vector<unsigned char>> host_;
  std::vector<const DLTensor *> ptrs_;
};

// Reads element i of raw host bytes of a dtype as a double.
double elementAsDouble(DType t, const unsigned char *bytes, size_t i);
// Parses "f32[1024,256]" into dtype and dims (no '?').
bool parseShapeSpec(const std::string &spec, DType *dtype, std::vector<int64_t> *dims, std::string *error);

}  // namespace hostjit
