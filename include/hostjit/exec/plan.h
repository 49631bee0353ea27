// plan.h - a verified program prepared for execution: the scalar
// expressions it needs in evaluation order, and flat steps over buffer
// slots, one struct per kind (plan_steps.def). The evaluator interprets a
// Plan; jit/ emits code from the same Plan, so both make the same runtime
// calls in the same order. Every struct lists its fields once
// (HOSTJIT_FIELDS): the fingerprint and the printer walk those lists.
#pragma once

#include <array>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/ir/error.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

// References inside a plan: typed indices, so that a slot is never read as
// an expression, nor an input as a slot.
struct ExprRef {
  uint32_t index = 0;  // into Plan::exprs
  bool operator==(const ExprRef &) const = default;
};
struct SlotRef {
  uint32_t index = 0;  // a buffer slot, below Plan::numSlots
  bool operator==(const SlotRef &) const = default;
};
struct InputRef {
  uint32_t index = 0;  // into Plan::inputs
  bool operator==(const InputRef &) const = default;
};
struct KernelRef {
  uint32_t index = 0;  // into Plan::kernels
  bool operator==(const KernelRef &) const = default;
};
struct LoopRef {
  uint32_t index = UINT32_MAX;  // into Plan::loops; UINT32_MAX: none
  bool valid() const { return index != UINT32_MAX; }
  bool operator==(const LoopRef &) const = default;
};
// An i64 expression of Plan::exprs giving bytes past the start of a
// tensor's memory (a view's offset along its chain); none: 0.
struct OffsetRef {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  bool operator==(const OffsetRef &) const = default;
};
using ExprRefs = std::vector<ExprRef>;
using SlotRefs = std::vector<SlotRef>;
using Dim3Refs = std::array<ExprRef, 3>;

// An hj_alloc's HJ_ALLOC_* bits, and an argument's hj_param_kind.
struct AllocFlags {
  uint32_t bits = 0;
  bool operator==(const AllocFlags &) const = default;
};
struct ParamKind {
  int32_t value = HJ_PARAM_PTR;
  bool operator==(const ParamKind &) const = default;
};
using CollectiveKind = Collective::Kind;

// A launch argument: a tensor input's or a buffer's data pointer, `offset`
// bytes on (a view's), with, for a tensor struct, the plan expressions of
// its sizes, then its strides; or the value of an expression passed as
// `param`.
struct InputArg {
  static constexpr const char *kName = "input";
  HOSTJIT_FIELDS((InputRef, input), (OffsetRef, offset), (ExprRefs, structDims))
};
struct BufferArg {
  static constexpr const char *kName = "buffer";
  HOSTJIT_FIELDS((SlotRef, slot), (OffsetRef, offset), (ExprRefs, structDims))
};
struct ValueArg {
  static constexpr const char *kName = "value";
  HOSTJIT_FIELDS((ExprRef, expr), (ParamKind, param))
};
using Arg = std::variant<InputArg, BufferArg, ValueArg>;
using Args = std::vector<Arg>;
// The tensor-struct dims of an argument: empty for pointers and values.
inline const ExprRefs &structDims(const Arg &a) {
  static const ExprRefs none;
  if (const auto *in = std::get_if<InputArg>(&a)) return in->structDims;
  if (const auto *b = std::get_if<BufferArg>(&a)) return b->structDims;
  return none;
}
// What a collective or a matmul reads or writes: nothing (a send's
// destination, a receive's source, a matmul's missing bias: NULL), a tensor
// input's memory or a buffer's, `offset` bytes on (a view's).
struct NoBuffer {
  static constexpr const char *kName = "none";
  HOSTJIT_NO_FIELDS
};
struct InputMemory {
  static constexpr const char *kName = "input";
  HOSTJIT_FIELDS((InputRef, input), (OffsetRef, offset))
};
struct BufferMemory {
  static constexpr const char *kName = "buffer";
  HOSTJIT_FIELDS((SlotRef, slot), (OffsetRef, offset))
};
using CollectiveBuffer = std::variant<NoBuffer, InputMemory, BufferMemory>;
// The hj_collective_kind of a collective statement's kind.
uint32_t hjCollectiveKind(CollectiveKind k);

// The steps of a plan, one struct per kind (plan_steps.def). Each says the
// runtime call it makes; a `site` says where the statement is, for messages:
// "launch 2 of @main at f.hir:14:3" (or the fusion segment it comes from).
namespace step {
// hj_alloc of `name` into `slot`; strides empty: contiguous.
struct Alloc {
  HOSTJIT_FIELDS((SlotRef, slot), (DType, dtype, DType::f32), (AllocFlags, flags), (ExprRefs, sizes),
                 (ExprRefs, strides), (std::string, name))
};
// hj_free of the buffer in `slot`, which becomes NULL (even on an error).
struct Free {
  HOSTJIT_FIELDS((SlotRef, slot))
};
// hj_launch of `kernel` with its arguments in declared order.
struct Launch {
  HOSTJIT_FIELDS((KernelRef, kernel), (Dim3Refs, grid), (Dim3Refs, block), (ExprRef, smem), (Args, args),
                 (std::string, site))
};
// Bracket a loop's steps (PlanLoop); no runtime call.
struct LoopBegin {
  HOSTJIT_FIELDS((LoopRef, loop))
};
struct LoopEnd {
  HOSTJIT_FIELDS((LoopRef, loop))
};
// Hands loop-carried buffers on (no runtime call): all at once, slot to[k]
// takes what slot from[k] held, and each slot in `from` that is not in `to`
// becomes NULL, so every live buffer stays in exactly one slot.
struct Move {
  HOSTJIT_FIELDS((SlotRefs, from), (SlotRefs, to))
};
// hj_set_stream, hj_record_use, hj_event_record, hj_event_wait, hj_stream_sync.
struct SetStream {
  HOSTJIT_FIELDS((uint32_t, stream))
};
struct Use {
  HOSTJIT_FIELDS((SlotRef, slot))
};
struct EventRecord {
  HOSTJIT_FIELDS((uint32_t, event))
};
struct EventWait {
  HOSTJIT_FIELDS((uint32_t, event))
};
struct StreamSync {
  HOSTJIT_NO_FIELDS
};
// hj_collective with HJ_COLL_GROUP_BEGIN / HJ_COLL_GROUP_END around the
// sends and receives that proceed together.
struct GroupBegin {
  HOSTJIT_FIELDS((std::string, site))
};
struct GroupEnd {
  HOSTJIT_FIELDS((std::string, site))
};
// hj_collective: `count` elements per rank (NCCL's count), reduction `op`
// (an hj_reduce_op), `peer` the root or peer; srcElems and dstElems the
// elements src and dst hold (0 where absent).
struct Collective {
  HOSTJIT_FIELDS((CollectiveKind, kind), (uint32_t, op), (DType, dtype, DType::f32), (CollectiveBuffer, src),
                 (CollectiveBuffer, dst), (ExprRef, count), (ExprRef, peer), (ExprRef, srcElems), (ExprRef, dstElems),
                 (std::string, site))
};
// One matrix of a matmul as stored: its memory, batches (1 for one
// matrix), rows, columns and their strides (batch stride 0 for one matrix).
struct MatmulMatrix {
  HOSTJIT_FIELDS((CollectiveBuffer, memory), (ExprRef, batches), (ExprRef, rows), (ExprRef, cols),
                 (ExprRef, batchStride), (ExprRef, rowStride), (ExprRef, colStride))
};
// hj_matmul of a, b into c, typed: bias and workspace NoBuffer when absent
// (their sizes then constant 0). Packed into hj_matmul's dims, dtypes and
// flags only where it is called (matmulDims, matmulDtypes, matmulFlags).
struct Matmul {
  HOSTJIT_FIELDS((MatmulMatrix, a), (MatmulMatrix, b), (MatmulMatrix, c), (CollectiveBuffer, bias),
                 (ExprRef, biasElems), (ExprRef, biasStride), (CollectiveBuffer, workspace),
                 (ExprRef, workspaceBytes), (DType, aType, DType::f32), (DType, cType, DType::f32),
                 (bool, transposeA), (bool, transposeB), (double, alpha, 1.0), (double, beta, 0.0),
                 (std::string, site))
};
// hj_custom_call of `callee` (a custom call of Plan::kernels) with its
// arguments in declared order, packed as a launch's are.
struct Call {
  HOSTJIT_FIELDS((KernelRef, callee), (Args, args), (std::string, site))
};
}  // namespace step

using Step = std::variant<
#define HOSTJIT_STEP(name, keyword) step::name,
#include "hostjit/exec/plan_steps.def"
#undef HOSTJIT_STEP
    std::monostate>;
// The index of step kind T in Step, for switches over Step::index() (each
// case a plan_steps.def entry: a jump table, where std::visit would call
// through a table of functions).
template <class T, size_t I = 0>
constexpr size_t stepIndex() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, Step>, T>) return I;
  else return stepIndex<T, I + 1>();
}
// The printer's keyword of step kind `index` (Step::index()).
const char *stepKeyword(size_t index);

// A counted loop. A loop-carried buffer, its init and the loop's result share
// one buffer slot; the body's Move step puts the yielded buffers there. Its
// steps run for index = lo, ..., hi - 1: at LoopBegin the
// index is set to lo and, when lo < hi, `exprs` are evaluated (in order) and
// the step after LoopBegin runs; otherwise execution continues after
// LoopEnd. At LoopEnd the index goes up by one; while it is below hi, `exprs`
// are evaluated again and execution goes back to the step after LoopBegin.
// An error evaluating `exprs` ends the call as any failing step does.
// `exprs`: the expressions computed on each iteration (those built from this
// loop's index, and from no deeper loop's), operands first; the index itself
// is an Expr::Kind::LoopIndex among them when it is used. lo and hi are
// computed outside the loop; begin and end are the step indices of its
// LoopBegin and LoopEnd; parent is the enclosing loop.
struct PlanLoop {
  HOSTJIT_FIELDS((ExprRef, lo), (ExprRef, hi), (uint32_t, begin), (uint32_t, end), (LoopRef, parent), (ExprRefs, exprs))
};

// Output i: the buffer in `slot` with these sizes and strides (plan
// expressions; strides empty: contiguous).
struct PlanOutput {
  HOSTJIT_FIELDS((SlotRef, slot), (DType, dtype, DType::f32), (ExprRefs, sizes), (ExprRefs, strides))
};

// A tensor parameter; dims kDynamic for ?. contiguousFor: why its memory
// must be contiguous (a collective moves it, or a kernel's ptr<T> parameter
// sees only its data pointer), so checkArguments wants compact strides;
// empty when any strides do. written: the program writes it (`written`).
struct PlanInput {
  HOSTJIT_FIELDS((std::string, name), (DType, dtype, DType::f32), (std::vector<int64_t>, dims),
                 (std::string, contiguousFor), (bool, written))
};

struct PlanScalar {
  HOSTJIT_FIELDS((std::string, name), (DType, dtype, DType::i64))
};

// A static dim of an output whose extent is computed: checked at run time,
// after the expressions and before any runtime call.
struct PlanCheck {
  HOSTJIT_FIELDS((ExprRef, expr), (int64_t, value), (std::string, message))
};

struct Plan {
  // funcName: the function's name, for messages. exprs: in evaluation
  // order, operands referring to earlier entries; those whose exprLoop is
  // none are evaluated once per call, before any step, the others by their
  // loop (PlanLoop::exprs). exprNames: for each expression, the value it
  // computes and where, for messages: "%blocks (f.hir:7:3)", "%blocks" for a
  // built program, or the fusion field it comes from.
  HOSTJIT_FIELDS((std::string, funcName), (std::vector<PlanInput>, inputs), (std::vector<PlanScalar>, scalars),
                 (std::vector<Expr>, exprs), (std::vector<LoopRef>, exprLoop), (std::vector<std::string>, exprNames),
                 (uint32_t, numSlots), (std::vector<PlanCheck>, checks), (std::vector<Step>, steps),
                 (std::vector<PlanLoop>, loops), (std::vector<PlanOutput>, outputs))
  // The program's kernels, CUDA paths resolved against its file. Not part
  // of the generated code (it refers to kernels by index): KernelTable::load
  // reads them.
  std::vector<Kernel> kernels;
  // The plan indices of the expressions makePlan was asked to keep, in order.
  ExprRefs kept;
};

// Kernel k of a program read from `file` ("" when built), its CUDA path
// taken relative to that file.
Kernel planKernel(const Kernel &k, const std::string &file);

// Verifies p and prepares it; an unverified program gives the formatted
// diagnostics as the error. `keep`: expressions of p to compute as well
// (whether or not a statement uses them), found in Plan::kept.
Expected<Plan> makePlan(const Program &p, std::span<const ExprId> keep = {});

// A compact, deterministic serialisation of every field of the plan that
// code generated from it depends on (all but `kernels` and `kept`, walked
// through their field lists); equal fingerprints give equal code.
std::string planFingerprint(const Plan &plan);

// The plan in a stable text form (`hostjit plan`): its signature, kernels,
// expressions, checks, loops, steps and outputs, every field by name.
std::string printPlan(const Plan &plan);

namespace detail {
template <class T>
struct IsList : std::false_type {};
template <class T>
struct IsList<std::vector<T>> : std::true_type {};
template <class T, size_t N>
struct IsList<std::array<T, N>> : std::true_type {};
template <class T>
struct IsVariant : std::false_type {};
template <class... T>
struct IsVariant<std::variant<T...>> : std::true_type {};
}  // namespace detail

// Calls f(ref) for every Ref (ExprRef, SlotRef, InputRef, LoopRef,
// KernelRef) in `value`: in its fields, their lists, variants and records,
// walked through the field lists, so a field added later is found too. A
// valid OffsetRef is an ExprRef too.
template <class Ref, class T, class F>
void forEachRef(const T &value, F &&f) {
  if constexpr (std::is_same_v<T, Ref>) {
    f(value);
  } else if constexpr (std::is_same_v<Ref, ExprRef> && std::is_same_v<T, OffsetRef>) {
    if (value.valid()) f(ExprRef{value.index});
  } else if constexpr (detail::IsList<T>::value) {
    for (const auto &x : value) forEachRef<Ref>(x, f);
  } else if constexpr (detail::IsVariant<T>::value) {
    std::visit([&](const auto &x) { forEachRef<Ref>(x, f); }, value);
  } else if constexpr (requires { value.forEachField([](const char *, const auto &) {}); }) {
    value.forEachField([&](const char *, const auto &x) { forEachRef<Ref>(x, f); });
  }
}

// Calls f(offset) for the OffsetRef of every tensor a step passes (a
// launch's or a call's arguments, a matmul's or a collective's operands).
template <class F>
void forEachArgOffset(const Step &s, F &&f) {
  auto walk = [&](const auto &x, auto &self) -> void {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, OffsetRef>) f(x);
    else if constexpr (detail::IsList<T>::value) for (const auto &y : x) self(y, self);
    else if constexpr (detail::IsVariant<T>::value) std::visit([&](const auto &y) { self(y, self); }, x);
    else if constexpr (requires { x.forEachField([](const char *, const auto &) {}); })
      x.forEachField([&](const char *, const auto &y) { self(y, self); });
  };
  walk(s, walk);
}

// hj_matmul's packed arguments of a matmul step: the HJ_MM_DIMS
// expressions in runtime.h's order; A's dtype | C's << 8; HJ_MM_* flags.
std::array<ExprRef, HJ_MM_DIMS> matmulDims(const step::Matmul &m);
uint32_t matmulDtypes(const step::Matmul &m);
uint32_t matmulFlags(const step::Matmul &m);

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
// sizes that fit, device, data, alignment, contiguity where the plan needs
// it) and scalars (count, types); errors name the argument
// (lib/exec/arguments.cpp). `tensors` false checks the counts and the
// scalars only: the caller knows the tensors passed already; with `skip`,
// tensor i is not checked where skip[i] is non-zero (inputs checked when
// they were bound, graph_mode.h).
Expected<void> checkArguments(const Plan &plan, const DLTensor *const *inputs, size_t numInputs,
                              const ScalarArg *scalars, size_t numScalars, DLDevice device, bool tensors = true,
                              const char *skip = nullptr);

// The checks of checkArguments for tensor input i alone.
Expected<void> checkTensorArgument(const Plan &plan, size_t i, const DLTensor *t, DLDevice device);

}  // namespace hostjit
