// plan.h - a verified program prepared for execution: the scalar
// expressions it needs in evaluation order, and flat alloc/free/launch
// steps over buffer slots. The evaluator interprets a Plan; jit/ emits code
// from the same Plan, so both make the same runtime calls in the same order.
#pragma once

#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/ir/error.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

struct PlanArg {
  enum class Kind : uint8_t { Input, Buffer, Expr } kind = Kind::Expr;
  uint32_t index = 0;  // tensor input, buffer slot or plan expression
  int32_t param = 0;   // hj_param_kind
  std::vector<uint32_t> dims;  // tensor structs: plan expressions of the sizes, then the strides
};

struct PlanStep {
  // LoopBegin/LoopEnd bracket a loop's steps (PlanLoop). Move hands
  // loop-carried buffers on (no runtime call): all at once, slot to[k] takes
  // what slot from[k] held, and each slot in `from` that is not in `to`
  // becomes NULL, so every live buffer stays in exactly one slot. The others
  // are the stream calls: hj_set_stream, hj_record_use, hj_event_record,
  // hj_event_wait, hj_stream_sync.
  // Collective: hj_collective with kind `kernel` (an hj_collective_kind),
  // op `flags`, `dtype`, src args[0] and dst args[1] (an Expr argument: no
  // tensor, NULL), count dims[0], peer dims[1], and the elements src and dst
  // hold dims[2] and dims[3] (plan expressions).
  enum class Kind : uint8_t {
    Alloc, Free, Launch, LoopBegin, LoopEnd, Move, SetStream, Use, EventRecord, EventWait, StreamSync, Collective
  } kind = Kind::Alloc;
  uint32_t slot = 0;   // Alloc/Free/Use: the buffer slot
  uint32_t loop = 0;   // LoopBegin/LoopEnd: the loop
  uint32_t index = 0;  // SetStream: the stream; EventRecord/EventWait: the event
  std::vector<uint32_t> from, to;  // Move: buffer slots
  // Alloc
  DType dtype = DType::f32;
  uint32_t flags = 0;                  // HJ_ALLOC_*
  std::vector<uint32_t> sizes, strides;  // plan expressions; strides empty: contiguous
  std::string name;                    // the buffer's value name (no '%')
  // Launch
  uint32_t kernel = 0;
  uint32_t dims[7] = {};  // grid xyz, block xyz, smem: plan expressions
  std::vector<PlanArg> args;
  // Where the launch is, for messages: "launch 2 of @main at f.hir:14:3"
  // (or the fusion segment it comes from).
  std::string site;
};

// A counted loop. A loop-carried buffer, its init and the loop's result share
// one buffer slot; the body's Move step puts the yielded buffers there. Its
// steps run for index = lo, ..., hi - 1: at LoopBegin the
// index is set to lo and, when lo < hi, `exprs` are evaluated (in order) and
// the step after LoopBegin runs; otherwise execution continues after
// LoopEnd. At LoopEnd the index goes up by one; while it is below hi, `exprs`
// are evaluated again and execution goes back to the step after LoopBegin.
// An error evaluating `exprs` ends the call as any failing step does.
struct PlanLoop {
  uint32_t lo = 0, hi = 0;     // plan expressions, computed outside this loop
  uint32_t begin = 0, end = 0;  // step indices of its LoopBegin and LoopEnd
  uint32_t parent = UINT32_MAX;  // the enclosing loop, or UINT32_MAX
  // The expressions computed on each iteration (those built from this
  // loop's index, and from no deeper loop's), operands first; the index
  // itself is an Expr::Kind::LoopIndex among them when it is used.
  std::vector<uint32_t> exprs;
};
constexpr uint32_t kNoLoop = UINT32_MAX;

struct PlanOutput {
  uint32_t slot = 0;
  DType dtype = DType::f32;
  std::vector<uint32_t> sizes, strides;  // plan expressions; strides empty: contiguous
};

struct PlanInput {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> dims;  // kDynamic for ?
  bool contiguous = false;    // a collective moves it: checkArguments wants compact strides
};

struct PlanScalar {
  std::string name;
  DType dtype = DType::i64;
};

struct PlanKernel {
  std::string name;
  std::vector<int32_t> params;  // hj_param_kind
  std::string host, cudaPath, entry;  // empty when absent; cudaPath resolved against the program's file
  std::string nvrtcOptions;           // extra NVRTC options (white-space separated), "" when none
  bool hasHost = false, hasCuda = false;
};

// A kernel declaration prepared for loading; `file` is where it was
// declared ("" when built): its CUDA path is taken relative to that file.
PlanKernel planKernel(const std::string &name, const std::vector<ParamType> &params,
                      const std::optional<std::string> &cuda, const std::optional<std::string> &entry,
                      const std::optional<std::string> &host, const std::optional<std::string> &nvrtcOptions,
                      const std::string &file);

// A static dim of an output whose extent is computed: checked at run time,
// after the expressions and before any runtime call.
struct PlanCheck {
  uint32_t expr = 0;
  int64_t value = 0;
  std::string message;
};

struct Plan {
  // Expressions in evaluation order: operands refer to earlier entries.
  // Those whose exprLoop is kNoLoop are evaluated once per call, before any
  // step; the others by their loop (PlanLoop::exprs).
  std::vector<Expr> exprs;
  std::vector<uint32_t> exprLoop;
  // For each expression, the value it computes and where, for messages:
  // "%blocks (f.hir:7:3)", or "%blocks" for a built program.
  std::vector<std::string> exprNames;
  uint32_t numSlots = 0;
  std::vector<PlanCheck> checks;
  std::vector<PlanStep> steps;
  std::vector<PlanLoop> loops;
  std::vector<PlanOutput> outputs;
  std::vector<PlanInput> inputs;
  std::vector<PlanScalar> scalars;
  std::vector<PlanKernel> kernels;
  std::string funcName;
};

// Verifies p and prepares it; an unverified program gives the formatted
// diagnostics as the error.
Expected<Plan> makePlan(const Program &p);

// A compact, deterministic serialisation of everything in a plan that code
// generated from it depends on; equal fingerprints give equal code.
std::string planFingerprint(const Plan &plan);

// A scalar argument with its type, for the C++ API.
struct ScalarArg {
  DType type = DType::i64;
  hj_value value{};
  static ScalarArg i64(int64_t v) { ScalarArg a; a.type = DType::i64; a.value.i64 = v; return a; }
  static ScalarArg i32(int32_t v) { ScalarArg a; a.type = DType::i32; a.value.i32 = v; return a; }
  static ScalarArg f32(float v) { ScalarArg a; a.type = DType::f32; a.value.f32 = v; return a; }
  static ScalarArg f64(double v) { ScalarArg a; a.type = DType::f64; a.value.f64 = v; return a; }
  static ScalarArg boolean(bool v) { ScalarArg a; a.type = DType::Bool; a.value.b = v; return a; }
};

// Checks inputs against the signature (count, rank, dtype, static dims,
// device, data) and scalars (count, types); errors name the argument.
Expected<bool> checkArguments(const Plan &plan, const DLTensor *const *inputs, size_t numInputs,
                              const ScalarArg *scalars, size_t numScalars, DLDevice device);

}  // namespace hostjit
