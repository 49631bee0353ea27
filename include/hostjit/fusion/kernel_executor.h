// kernel_executor.h - runs a fusion's segments one kernel at a time:
// KernelExecutor for one segment, FusionExecutor for all of them through
// the fusion's lowered plan. A
// KernelExecutor lowers its segment alone to a program (lowerSegment) and
// runs that program's Plan through the evaluator, so it makes the runtime
// calls the lowered fusion makes (same allocations, flags, memsets, launches
// and arguments, in the same order) and reports errors in the same words;
// the tests compare the records.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/plan.h"
#include "hostjit/exec/runtime_handles.h"
#include "hostjit/fusion/analysis.h"
#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/lowering.h"

namespace hostjit {

// A buffer as hj_alloc is asked for it.
struct BufferSpec {
  std::string name;  // the name in records (a summary entry may be renamed when two segments share a name)
  DType dtype = DType::f32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // empty: contiguous; 0 marks an expanded dim
  uint32_t flags = 0;            // HJ_ALLOC_*
  int64_t offset = 0;            // a view's elements past the start of the tensor it views
};

// b's strides; contiguous ones when it has none.
std::vector<int64_t> effectiveStrides(const BufferSpec &b);

// The numbers of one call of a segment, computed from its arguments.
struct SegmentCall {
  std::vector<BufferSpec> outputs;        // every output, views included (flags of a view are 0)
  std::vector<BufferSpec> intermediates;  // what the fallback path allocates, in order
  int64_t dims[7] = {};                   // grid xyz, block xyz, shared bytes
  std::vector<hj_value> scalars;          // the kernel's scalar arguments, as their parameter types
};

class KernelExecutor {
 public:
  // Checks the fusion (checkFusion's errors) and prepares segment `segment`.
  // Loads the fusion's kernels on rt unless `kernels` (a table of the same
  // fusion, e.g. another executor's, for the same backend) is given.
  static Expected<KernelExecutor> create(std::shared_ptr<const Fusion> f, size_t segment, std::shared_ptr<Runtime> rt,
                                         std::shared_ptr<KernelTable> kernels = nullptr);

  // Computes the call's numbers with the segment's plan. inputs: the
  // segment's inputs in order; scalars: the fusion's scalar inputs, all of
  // them, in order. No runtime call is made; errors (a division by zero, an
  // overflow) read as the lowered fusion's do, naming the JSON field.
  Expected<SegmentCall> prepare(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars) const;

  // Runs the segment on rt's context. outputs: the segment's outputs in
  // order, allocated by the caller (an alias output is a DLTensor over its
  // base's memory); each is checked against its spec. Without
  // `intermediates` they are allocated here (the fallback path) with
  // hj_alloc and exactly the summary's flags, and freed after the launch.
  // With them, their count, dtype, shape and strides are checked against the
  // summary and they are used as given (the caller frees them). On failure,
  // what this call allocated is freed, newest first. A segment without a
  // kernel does nothing.
  Expected<void> run(Runtime &rt, std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars,
                     std::span<const DLTensor *const> outputs, std::span<const DLTensor *const> intermediates = {}) const;

  const Segment &segment() const;
  const std::shared_ptr<KernelTable> &kernels() const { return kernels_; }
  // The segment's program: allocating its intermediates (the fallback
  // path), or taking them as inputs.
  const Program &program(bool supplied) const { return (supplied ? supplied_ : fallback_).lowered.program; }

 private:
  friend class FusionExecutor;
  // A segment program, its plan (the kept expressions: each output's
  // extents then strides, each intermediate's, the launch's 7 dims, the
  // scalar arguments) and the evaluator that runs it.
  struct Runner {
    SegmentProgram lowered;
    std::shared_ptr<const Plan> plan;
    std::shared_ptr<const Evaluator> eval;
  };
  static Expected<Runner> makeRunner(const Fusion &f, const fusion::FusionAnalysis &a, size_t segment, bool supplied,
                                     const std::shared_ptr<Runtime> &rt, const std::shared_ptr<KernelTable> &kernels);
  // run() with the arguments checked, the call's numbers prepared for them;
  // returns the runtime's status.
  int32_t launch(Runtime &rt, std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars,
                 std::span<const DLTensor *const> outputs, std::span<const DLTensor *const> intermediates) const;

  std::shared_ptr<const Fusion> f_;
  std::shared_ptr<const fusion::FusionAnalysis> a_;
  size_t index_ = 0;
  std::shared_ptr<Runtime> rt_;
  std::shared_ptr<KernelTable> kernels_;
  Runner fallback_, supplied_;
};

// A whole fusion run through its lowered program (lowerFusion), each
// segment's launch or matmul made by that segment's KernelExecutor: the
// program's plan allocates the outputs and frees each buffer after its last
// use, so the fusion's buffers follow the one rule the lowering states, and
// the kernels run as KernelExecutor runs them (the fallback path, or with
// the intermediates the plan allocated). Every segment's numbers are
// computed before the first runtime call, so an argument error allocates
// nothing.
class FusionExecutor {
 public:
  struct Options {
    // The lowered plan allocates each segment's intermediates (hj_alloc, the
    // summary's flags) and hands them to the KernelExecutor, as a Host IR
    // runtime does. Otherwise the KernelExecutor allocates them itself (the
    // fallback path). The runtime calls are the same either way.
    bool supplyIntermediates = false;
  };
  static Expected<FusionExecutor> create(const Fusion &f, std::shared_ptr<Runtime> rt, Options options);
  // Moved, not copied: the call in progress is the executor's state, so
  // it runs one call at a time.
  FusionExecutor(FusionExecutor &&) = default;
  FusionExecutor &operator=(FusionExecutor &&) = default;
  FusionExecutor(const FusionExecutor &) = delete;
  FusionExecutor &operator=(const FusionExecutor &) = delete;
  static Expected<FusionExecutor> create(const Fusion &f, std::shared_ptr<Runtime> rt) { return create(f, rt, Options{}); }
  // Checks the arguments (as Evaluator::run does) and returns the outputs.
  Expected<std::vector<Tensor>> run(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars = {});
  // The lowered plan: its signature (inputs, scalars, kernels) is the fusion's.
  const Plan &signature() const { return *signature_; }

 private:
  FusionExecutor() = default;
  // The lowered plan's steps that go to the segments, and the call in progress.
  struct Dispatch;
  std::shared_ptr<const Plan> signature_;  // the lowered plan
  std::shared_ptr<Dispatch> dispatch_;
  std::shared_ptr<Evaluator> eval_;  // the lowered plan, its launches and matmuls handed to dispatch_
};

}  // namespace hostjit
