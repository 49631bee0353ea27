// verifier_impl.h - the Verifier: its state (what is defined, freed,
// handed to a loop, on which stream) and a check per statement kind. Its
// methods are in verifier.cpp, verify_statements.cpp, verify_buffers.cpp and
// verify_scopes.cpp.
#pragma once

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "hostjit/ir/scalar_semantics.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"

namespace hostjit::verify_detail {

// A dtype's name with its article, as it is read: "an i64", "an f32", "a bf16".
inline std::string aType(DType t) {
  std::string n = dtypeName(t);
  return (n[0] == 'i' || n[0] == 'f' ? "an " : "a ") + n;
}

class Verifier {
 public:
  explicit Verifier(const Program &p)
      : p_(p),
        defined_(p.values.size(), false),
        freedAt_(p.values.size()),
        handedAt_(p.values.size()),
        yielded_(p.values.size(), false),
        scope_(p.values.size(), kTop),
        stream_(p.values.size(), kTop) {}

  Diagnostics run();

 private:
  void error(Loc loc, std::string msg);
  std::string name(ValueId v) const { return "%" + p_.value(v).name; }
  static std::string buffers(size_t n) { return std::to_string(n) + (n == 1 ? " buffer" : " buffers"); }
  static std::string at(Loc l) { return l.known() ? " at line " + std::to_string(l.line) : ""; }

  void checkKernels();
  // A custom call's declaration: a symbol, no kernel attributes.
  void checkCustom(const Kernel &k);

  void checkSignature();

  void define(ValueId v);

  static const char *handleName(Value::Handle h) { return h == Value::Handle::Stream ? "a stream" : "an event"; }

  // Data operands are scalars and tensors: a stream or an event is refused.
  bool notHandle(ValueId v, Loc loc);

  // The operand of 'on' or 'wait': a visible value of that handle kind.
  bool handleOperand(const Operand &o, Value::Handle want, const char *stmt);

  // Whether a defined value is visible here: defined outside every loop, or
  // in one of the loops being checked.
  bool visible(ValueId v, Loc loc);

  // Checks that a value operand is defined and, unless `metadataOnly`, not freed.
  bool use(const Operand &o, bool metadataOnly = false);

  // A size operand (extents, strides, launch dims): an i64 value or an
  // integer literal (>= minLit). i32 values are refused: sizes are i64, and
  // an i32 would leak its width into expressions built from it.
  // An i64 operand whose value, when it is known statically (a literal or a
  // value that folded), must lie in [minValue, maxValue].
  void intOperand(const Operand &o, const std::string &what, int64_t minValue, int64_t maxValue = INT64_MAX);

  // A constant operand's integer value (constant(o) holds).
  int64_t value(const Operand &o) const { return o.isValue() ? p_.exprs[p_.value(o.value).expr].i : o.i; }

  // An integer operand's value when it is known statically, else nullopt.
  std::optional<int64_t> known(const Operand &o) const;

  void check(const ScalarOp &n);

  // Why constant operands do not fold (division by zero, overflow, a
  // conversion out of range).
  std::string foldError(const ScalarOp &n, DType resultType) const;

  // A constant float operand's value (constant(o) holds).
  double floatValue(const Operand &o) const;

  // Whether an operand folded to a constant (a literal, or a value that did).
  bool constant(const Operand &o) const;

  // Integer literals must fit the type of the value they meet (i32, bool):
  // a binary op's operands, or select's choices.
  bool literalsFit(const ScalarOp &n);

  void check(const Alloc &n);

  // The stream value of the innermost 'on' block, or kTop for the main stream.
  uint32_t currentStream() const;

  void check(const View &n);
  void checkViewBounds(const View &n);
  void writes(const Operand &o, const std::string &what);
  std::optional<std::pair<uint64_t, uint64_t>> knownElements(ValueId v, bool *overflow) const;

  bool isAllocated(ValueId v) const;

  // A buffer that owns its memory: made by alloc, carried by a loop, or a
  // loop's result (not an input, not a view).
  bool ownsMemory(ValueId v) const { return isAllocated(v) || (p_.value(v).isTensor && p_.loopOf(v)); }

  void check(const Free &n);

  // The first return statement, found once (every free asks).
  const Stmt *returnStmt();

  void check(const Launch &n);

  void check(const For &n);

  // Whether init k of loop n is a buffer of the scope around the loop
  // (`outer`), which the loop may take over; reports why not.
  bool canHandOver(const For &n, size_t k, uint32_t outer);

  // `yield`: the last statement of the body of a loop with iter(...).
  void check(const Yield &n);

  void yieldOne(const For &f, uint32_t loop, const Yield &n, size_t i);

  // A yielded buffer v takes the place of carried buffer c: the same dtype,
  // rank, extents, strides, flags and stream, so that `size %c, d` and the
  // allocation contract hold in every iteration and after the loop.
  void sameBuffer(ValueId c, ValueId v, Loc loc);

  // Whether two size operands are the same expression (they fold alike).
  bool sameSize(const Operand &a, const Operand &b) const;

  bool usesLoopIndex(ExprId e) const;

  std::string stridesText(const Alloc &a) const;
  static std::string flagsText(const Alloc &a);
  std::string streamText(uint32_t s) const;

  // The end of a loop: what its body allocated, and its carried buffers,
  // must be freed or yielded in it; its results are defined from here on.
  void check(const EndFor &n);

  void check(const StreamDef &n);

  void check(const On &n);

  void check(const EndOn &n);

  void check(const Record &n);

  void check(const Wait &n) { handleOperand(n.event, Value::Handle::Event, "wait"); }

  void check(const Sync &) {}

  void check(const CommQuery &n) { define(n.result); }

  // A tensor value (used once checked); rootTensor: and an input or a
  // buffer, not a view.
  bool tensorValue(const Operand &o, const std::string &what);
  bool rootTensor(const Operand &o, const std::string &what);
  // The tensors of a collective: contiguous memory of a dtype NCCL moves.
  bool collectiveTensor(const Operand &o, const std::string &what);

  void check(const Collective &n);
  // A matmul's operand: a tensor (input, buffer or view) of a rank in
  // [minRank, maxRank].
  bool matmulTensor(const Operand &o, const std::string &what, uint32_t minRank, uint32_t maxRank);
  // Dim d of tensor v when the program fixes it (a static input dim, a
  // constant extent of its buffer or view).
  std::optional<int64_t> staticDim(ValueId v, uint32_t d) const;
  // Stride d of a view or buffer whose strides are given and constant.
  std::optional<int64_t> staticStride(ValueId v, uint32_t d) const;
  void check(const Matmul &n);
  void check(const Call &n);
  // The arguments of a launch or a call against the declaration's
  // parameters; `what` is "launch of" or "call of".
  void checkArgs(const Kernel &k, const std::vector<Operand> &args, const char *what);

  void check(const Return &n);

  void check(const std::monostate &) {}

  void checkLeaks();

  static constexpr uint32_t kTop = UINT32_MAX;  // a scope outside every loop

  const Program &p_;
  Diagnostics d_;
  const Stmt *stmt_ = nullptr;
  uint32_t index_ = 0;  // the statement being checked
  std::vector<uint32_t> loops_;  // the For statements around it, outermost first
  std::vector<uint32_t> ons_;    // the On statements around it
  static constexpr uint32_t kMaxStreams = HJ_MAX_STREAMS, kMaxEvents = HJ_MAX_EVENTS;  // the runtime's limits
  uint32_t streams_ = 0, events_ = 0;
  std::vector<bool> defined_;
  std::vector<std::optional<Loc>> freedAt_;
  std::vector<std::optional<Loc>> handedAt_;  // per value: the loop it was handed to (an init)
  std::vector<bool> yielded_;
  std::vector<uint32_t> scope_;  // per value: the innermost For around its definition, or kTop
  std::vector<uint32_t> stream_;  // per buffer: the stream value it is allocated on, or kTop for the main one
  std::vector<bool> loopYielded_;  // per loop of loops_: its body has reached its 'yield'
  std::unordered_map<std::string, ValueId> names_;
  // owned_: the buffers that own memory (allocs, carried buffers, loop
  // results), each to be freed, yielded, handed to a loop or returned.
  std::vector<ValueId> owned_, returned_;
  const Stmt *return_ = nullptr;
  bool returnSearched_ = false;
};

}  // namespace hostjit::verify_detail
