// verifier.cpp - checks every Host IR rule and reports each problem once.
#include "hostjit/verify/verifier.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "hostjit/ir/scalar_semantics.h"
#include "hostjit/text/text.h"

namespace hostjit {

namespace {

// A dtype's name with its article, as it is read: "an i64", "an f32", "a bf16".
std::string aType(DType t) {
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

  Diagnostics run() {
    checkKernels();
    checkSignature();
    for (size_t i = 0; i < p_.body.size(); ++i) {
      stmt_ = &p_.body[i];
      index_ = static_cast<uint32_t>(i);
      std::visit([&](const auto &n) { check(n); }, p_.body[i].node);
    }
    stmt_ = nullptr;
    for (uint32_t open : loops_) error(p_.body[open].loc, "the loop" + at(p_.body[open].loc) + " is not closed");
    for (uint32_t open : ons_) error(p_.body[open].loc, "the 'on' block" + at(p_.body[open].loc) + " is not closed");
    if (p_.body.empty() || p_.body.back().kind() != StmtKind::Return)
      error(p_.body.empty() ? p_.funcLoc : p_.body.back().loc, "function @" + p_.funcName + " must end with 'return'");
    checkLeaks();
    d_.sort();
    return std::move(d_);
  }

 private:
  void error(Loc loc, std::string msg) {
    if (!loc.known() && stmt_) loc = stmt_->loc;
    d_.error(loc, std::move(msg), stmt_ && !stmt_->loc.known() ? printStmt(p_, *stmt_) : std::string());
  }
  std::string name(ValueId v) const { return "%" + p_.value(v).name; }
  static std::string buffers(size_t n) { return std::to_string(n) + (n == 1 ? " buffer" : " buffers"); }
  static std::string at(Loc l) { return l.known() ? " at line " + std::to_string(l.line) : ""; }

  void checkKernels() {
    std::unordered_map<std::string, Loc> seen;
    for (const Kernel &k : p_.kernels) {
      if (!seen.emplace(k.name, k.loc).second) d_.error(k.loc, "redefinition of kernel @" + k.name);
      if (k.cuda && !k.entry) d_.error(k.loc, "kernel @" + k.name + " gives 'cuda' without 'entry'");
      if (k.image && !k.entry) d_.error(k.loc, "kernel @" + k.name + " gives 'image' without 'entry'");
      if (k.entry && !k.cuda && !k.image) d_.error(k.loc, "kernel @" + k.name + " gives 'entry' without 'cuda' or 'image'");
      if (k.cuda && k.image)
        d_.error(k.loc, "kernel @" + k.name + " gives both 'cuda' and 'image'; a kernel has one CUDA implementation");
      if (k.image && k.nvrtcOptions)
        d_.error(k.loc, "kernel @" + k.name + " gives 'nvrtc_options' with 'image'; an image is compiled already");
      if (!k.cuda && !k.image && !k.host)
        d_.error(k.loc, "kernel @" + k.name + " has no implementation: give 'host' and/or 'cuda' or 'image' with 'entry'");
      for (const ParamType &pt : k.params)
        if (!pt.isTensor() && !isScalarType(pt.dtype))
          d_.error(k.loc, "kernel @" + k.name + ": parameter type " + toString(pt) + " is not a scalar type");
    }
  }

  void checkSignature() {
    for (ValueId v : p_.params) {
      define(v);
      const Value &val = p_.value(v);
      if (val.isTensor && val.rank > kMaxRank)
        d_.error(val.loc, name(v) + " has rank " + std::to_string(val.rank) + "; the limit is 8");
      if (!val.isTensor && !isScalarType(val.dtype))
        d_.error(val.loc, name(v) + ": " + dtypeName(val.dtype) + " is not a scalar type");
    }
  }

  void define(ValueId v) {
    const Value &val = p_.value(v);
    auto [it, fresh] = names_.emplace(val.name, v);
    if (!fresh) {
      Loc first = p_.value(it->second).loc;
      std::string where = first.known() ? " (first defined at line " + std::to_string(first.line) + ":" +
                                              std::to_string(first.col) + ")"
                                        : "";
      error(val.loc, "redefinition of %" + val.name + where);
    }
    defined_[v.index] = true;
    scope_[v.index] = loops_.empty() ? kTop : loops_.back();
  }

  static const char *handleName(Value::Handle h) { return h == Value::Handle::Stream ? "a stream" : "an event"; }

  // Data operands are scalars and tensors: a stream or an event is refused.
  bool notHandle(ValueId v, Loc loc) {
    Value::Handle h = p_.value(v).handle;
    if (h == Value::Handle::None) return true;
    error(loc, name(v) + " is " + handleName(h) + "; only 'on' takes a stream and only 'wait' an event");
    return false;
  }

  // The operand of 'on' or 'wait': a visible value of that handle kind.
  bool handleOperand(const Operand &o, Value::Handle want, const char *stmt) {
    if (!o.isValue()) {
      error(o.loc, std::string("'") + stmt + "' expects " + (want == Value::Handle::Stream ? "a stream" : "an event") +
                       " value");
      return false;
    }
    if (!defined_[o.value.index]) {
      error(o.loc, "use of " + name(o.value) + " before its definition");
      return false;
    }
    if (!visible(o.value, o.loc)) return false;
    if (p_.value(o.value).handle != want) {
      error(o.loc, std::string("'") + stmt + "' expects " + (want == Value::Handle::Stream ? "a stream" : "an event") +
                       "; " + name(o.value) + " is " +
                       (p_.value(o.value).handle == Value::Handle::None ? std::string("not one")
                                                                          : std::string(handleName(p_.value(o.value).handle))));
      return false;
    }
    return true;
  }

  // Whether a defined value is visible here: defined outside every loop, or
  // in one of the loops being checked.
  bool visible(ValueId v, Loc loc) {
    uint32_t s = scope_[v.index];
    if (s == kTop || std::find(loops_.begin(), loops_.end(), s) != loops_.end()) return true;
    error(loc, "use of " + name(v) + " outside the loop" + at(p_.body[s].loc) + " that defines it");
    return false;
  }

  // Checks that a value operand is defined and, unless `metadataOnly`, not freed.
  bool use(const Operand &o, bool metadataOnly = false) {
    if (!o.isValue()) return true;
    if (!defined_[o.value.index]) {
      error(o.loc, "use of " + name(o.value) + " before its definition");
      return false;
    }
    if (!visible(o.value, o.loc)) return false;
    if (!notHandle(o.value, o.loc)) return false;
    if (!metadataOnly && freedAt_[o.value.index]) {
      error(o.loc, "use of " + name(o.value) + " after it was freed" + at(*freedAt_[o.value.index]));
      return false;
    }
    if (!metadataOnly && handedAt_[o.value.index]) {
      error(o.loc, "use of " + name(o.value) + " after it was handed to the loop" + at(*handedAt_[o.value.index]));
      return false;
    }
    ValueId root = p_.rootOf(o.value);
    if (!metadataOnly && root != o.value && freedAt_[root.index]) {
      error(o.loc, "use of view " + name(o.value) + " after its buffer " + name(root) + " was freed" +
                       at(*freedAt_[root.index]));
      return false;
    }
    if (!metadataOnly && root != o.value && handedAt_[root.index]) {
      error(o.loc, "use of view " + name(o.value) + " after its buffer " + name(root) + " was handed to the loop" +
                       at(*handedAt_[root.index]));
      return false;
    }
    return true;
  }

  // A size operand (extents, strides, launch dims): an i64 value or an
  // integer literal (>= minLit). i32 values are refused: sizes are i64, and
  // an i32 would leak its width into expressions built from it.
  // An i64 operand whose value, when it is known statically (a literal or a
  // value that folded), must lie in [minValue, maxValue].
  void intOperand(const Operand &o, const std::string &what, int64_t minValue, int64_t maxValue = INT64_MAX) {
    if (!use(o)) return;
    auto range = [&](int64_t v) {
      if (v < minValue) error(o.loc, what + " must be >= " + std::to_string(minValue) + ", got " + std::to_string(v));
      else if (v > maxValue) error(o.loc, what + " must be <= " + std::to_string(maxValue) + ", got " + std::to_string(v));
    };
    switch (o.kind) {
      case Operand::Kind::Int: range(o.i); return;
      case Operand::Kind::Float: error(o.loc, what + " must be an integer, not a float literal"); return;
      case Operand::Kind::Value: {
        const Value &v = p_.value(o.value);
        if (v.isTensor) error(o.loc, what + " must be an i64 scalar; " + name(o.value) + " is a tensor");
        else if (v.dtype != DType::i64)
          error(o.loc, what + " must be an i64 scalar; " + name(o.value) + " is " + dtypeName(v.dtype));
        else if (constant(o)) range(value(o));
        return;
      }
    }
  }

  // A constant operand's integer value (constant(o) holds).
  int64_t value(const Operand &o) const { return o.isValue() ? p_.exprs[p_.value(o.value).expr].i : o.i; }

  // An integer operand's value when it is known statically, else nullopt.
  std::optional<int64_t> known(const Operand &o) const {
    if (o.kind == Operand::Kind::Float) return std::nullopt;
    if (o.isValue() && (!defined_[o.value.index] || p_.value(o.value).isTensor || isFloat(p_.value(o.value).dtype) ||
                        !constant(o)))
      return std::nullopt;
    return value(o);
  }

  void check(const ScalarOp &n) {
    bool meta = opClass(n.op) == OpClass::Query;
    const Operand *ops[3] = {&n.a, &n.b, &n.c};
    unsigned arity = opArity(n.op);
    bool ok = true, allConstant = true;
    for (unsigned k = 0; k < arity; ++k) {
      ok = use(*ops[k], meta && k == 0) && ok;
      allConstant = allConstant && constant(*ops[k]);
    }
    if (ok) {
      ScalarOpType t = inferScalarOp(p_, n);
      if (!t.type) error(t.where, t.error);
      else if (!meta && !literalsFit(n))
        ;
      else if ((n.op == OpCode::Div || n.op == OpCode::Mod || n.op == OpCode::CeilDiv) &&
               n.b.kind == Operand::Kind::Int && n.b.i == 0)
        error(n.b.loc, std::string("division by zero: the divisor of '") + opName(n.op) + "' is 0");
      else if (!meta && !p_.value(n.result).expr.valid() && allConstant)
        error(stmt_->loc, "cannot evaluate " + name(n.result) + ": " + foldError(n, *t.type) + " in a constant expression");
    }
    define(n.result);
  }

  // Why constant operands do not fold (division by zero, overflow, a
  // conversion out of range).
  std::string foldError(const ScalarOp &n, DType resultType) const {
    ScalarError e = ScalarError::None;
    if (opArity(n.op) == 1) {
      OperandType ta = operandType(p_, n.a);
      int64_t i = 0;
      double f = 0;
      e = evalUnaryOp(n.op, ta.dtype, isFloat(ta.dtype) ? 0 : value(n.a), isFloat(ta.dtype) ? floatValue(n.a) : 0.0,
                      &i, &f);
    } else {
      OperandType ta = operandType(p_, n.a), tb = operandType(p_, n.b);
      DType t = !ta.isLiteral ? ta.dtype : !tb.isLiteral ? tb.dtype : resultType;
      int64_t r = 0;
      e = evalIntOp(n.op, t, value(n.a), value(n.b), &r);
    }
    return e == ScalarError::None ? "no constant result" : scalarErrorText(e, resultType);
  }

  // A constant float operand's value (constant(o) holds).
  double floatValue(const Operand &o) const {
    if (o.isValue()) return p_.exprs[p_.value(o.value).expr].f;
    return o.kind == Operand::Kind::Float ? o.f : static_cast<double>(o.i);
  }

  // Whether an operand folded to a constant (a literal, or a value that did).
  bool constant(const Operand &o) const {
    if (!o.isValue()) return true;
    ExprId e = p_.value(o.value).expr;
    return e.valid() && p_.exprs[e].kind == Expr::Kind::Const;
  }

  // Integer literals must fit the type of the value they meet (i32, bool):
  // a binary op's operands, or select's choices.
  bool literalsFit(const ScalarOp &n) {
    unsigned arity = opArity(n.op);
    if (arity == 1) return true;
    const Operand &x = arity == 3 ? n.b : n.a, &y = arity == 3 ? n.c : n.b;
    OperandType ta = operandType(p_, x), tb = operandType(p_, y);
    DType t = !ta.isLiteral ? ta.dtype : tb.dtype;
    if (ta.isLiteral && tb.isLiteral) return true;
    for (const Operand *o : {&x, &y}) {
      if (o->kind != Operand::Kind::Int) continue;
      bool fits = t != DType::i32 && t != DType::Bool;
      if (t == DType::i32) fits = o->i >= INT32_MIN && o->i <= INT32_MAX;
      if (t == DType::Bool) fits = o->i == 0 || o->i == 1;
      if (!fits) {
        error(o->loc, "literal " + std::to_string(o->i) + " does not fit " + dtypeName(t));
        return false;
      }
    }
    return true;
  }

  void check(const Alloc &n) {
    if (n.extents.size() > kMaxRank)
      error(stmt_->loc, "alloc of rank " + std::to_string(n.extents.size()) + "; the limit is 8");
    for (size_t i = 0; i < n.extents.size(); ++i) intOperand(n.extents[i], "extent " + std::to_string(i), 0);
    if (!n.strides.empty() && n.strides.size() != n.extents.size())
      error(stmt_->loc, "alloc has " + std::to_string(n.extents.size()) + " extents but " +
                            std::to_string(n.strides.size()) + " strides");
    for (size_t i = 0; i < n.strides.size(); ++i) intOperand(n.strides[i], "stride " + std::to_string(i), 0);
    if (n.resetsToZero && !n.zeroInit)
      error(stmt_->loc, "resets_to_zero without zero_init: a buffer the kernel resets must start zeroed");
    std::vector<int64_t> sizes, strides;
    bool allKnown = true;
    for (const auto *list : {&n.extents, &n.strides})
      for (const Operand &o : *list) {
        auto v = known(o);
        allKnown = allKnown && v && *v >= 0;
        if (v) (list == &n.extents ? sizes : strides).push_back(*v);
      }
    uint64_t bytes = 0;
    if (allKnown && n.extents.size() <= kMaxRank && (n.strides.empty() || n.strides.size() == n.extents.size()) &&
        !bufferBytes(sizes, strides, dtypeBytes(n.dtype), &bytes))
      error(stmt_->loc, "alloc of " + name(n.result) + " holds more than 2^62 bytes: its size overflows");
    define(n.result);
    owned_.push_back(n.result);
    stream_[n.result.index] = currentStream();
  }

  // The stream value of the innermost 'on' block, or kTop for the main stream.
  uint32_t currentStream() const {
    if (ons_.empty()) return kTop;
    const Operand &s = std::get<On>(p_.body[ons_.back()].node).stream;
    return s.isValue() ? s.value.index : kTop;
  }

  void check(const View &n) {
    if (n.extents.size() > kMaxRank)
      error(stmt_->loc, "view of rank " + std::to_string(n.extents.size()) + "; the limit is 8");
    if (!n.base.isValue() || (defined_[n.base.value.index] && !p_.value(n.base.value).isTensor)) {
      error(n.base.loc, "view expects a tensor to view");
    } else {
      use(n.base);
    }
    for (size_t i = 0; i < n.extents.size(); ++i) intOperand(n.extents[i], "extent " + std::to_string(i), 0);
    if (!n.strides.empty() && n.strides.size() != n.extents.size())
      error(stmt_->loc, "view has " + std::to_string(n.extents.size()) + " extents but " +
                            std::to_string(n.strides.size()) + " strides");
    for (size_t i = 0; i < n.strides.size(); ++i) intOperand(n.strides[i], "stride " + std::to_string(i), 0);
    define(n.result);
  }

  bool isAllocated(ValueId v) const {
    const Value &val = p_.value(v);
    return val.isTensor && val.def == Value::Def::Stmt && val.defIndex < p_.body.size() &&
           std::holds_alternative<Alloc>(p_.body[val.defIndex].node);
  }

  // A buffer that owns its memory: made by alloc, carried by a loop, or a
  // loop's result (not an input, not a view).
  bool ownsMemory(ValueId v) const { return isAllocated(v) || (p_.value(v).isTensor && p_.loopOf(v)); }

  void check(const Free &n) {
    if (!n.tensor.isValue()) {
      error(n.tensor.loc, "free expects a buffer");
      return;
    }
    ValueId v = n.tensor.value;
    if (!defined_[v.index]) {
      error(n.tensor.loc, "use of " + name(v) + " before its definition");
      return;
    }
    if (!visible(v, n.tensor.loc)) return;
    if (!notHandle(v, n.tensor.loc)) return;
    if (!p_.value(v).isTensor) {
      error(n.tensor.loc, "free expects a buffer; " + name(v) + " is a scalar");
      return;
    }
    if (p_.value(v).def == Value::Def::TensorInput) {
      error(n.tensor.loc, "cannot free function input " + name(v) + "; inputs belong to the caller");
      return;
    }
    if (!ownsMemory(v)) {
      ValueId root = p_.rootOf(v);
      std::string hint;
      if (root != v)
        hint = p_.value(root).def == Value::Def::TensorInput
                   ? " (it views function input " + name(root) + ", which belongs to the caller)"
                   : " (free its buffer " + name(root) + " instead)";
      error(n.tensor.loc, "cannot free view " + name(v) + "; a view owns no memory" + hint);
      return;
    }
    if (freedAt_[v.index]) {
      error(n.tensor.loc, "double free of " + name(v) + " (already freed" + at(*freedAt_[v.index]) + ")");
      return;
    }
    if (handedAt_[v.index]) {
      error(n.tensor.loc, "frees " + name(v) + ", which was handed to the loop" + at(*handedAt_[v.index]) +
                              ": the loop owns it now (free the loop's result instead)");
      return;
    }
    if (const Stmt *r = returnStmt(); r)
      for (const Operand &o : std::get<Return>(r->node).values)
        if (o.isValue() && o.value == v)
          error(n.tensor.loc, "frees " + name(v) + ", which is returned" + at(r->loc) +
                                  "; a returned buffer belongs to the caller");
    uint32_t here = loops_.empty() ? kTop : loops_.back();
    if (scope_[v.index] != here) {
      error(n.tensor.loc, "frees " + name(v) + " inside the loop" + at(p_.body[here].loc) +
                              ", but it was allocated outside that loop: its next iteration would free it again");
      return;
    }
    freedAt_[v.index] = stmt_->loc;
  }

  // The first return statement, found once (every free asks).
  const Stmt *returnStmt() {
    if (!returnSearched_) {
      returnSearched_ = true;
      for (const Stmt &s : p_.body)
        if (s.kind() == StmtKind::Return) {
          return_ = &s;
          break;
        }
    }
    return return_;
  }

  void check(const Launch &n) {
    const Kernel &k = p_.kernel(n.kernel);
    static const char *axes[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) intOperand(n.grid[i], std::string("grid.") + axes[i], 1, HJ_MAX_GRID_DIM);
    for (int i = 0; i < 3; ++i) intOperand(n.block[i], std::string("block.") + axes[i], 1, HJ_MAX_BLOCK_THREADS);
    intOperand(n.smem, "smem", 0, HJ_MAX_SMEM_BYTES);
    auto bx = known(n.block[0]), by = known(n.block[1]), bz = known(n.block[2]);
    if (bx && by && bz && *bx >= 1 && *by >= 1 && *bz >= 1 && *bx <= HJ_MAX_BLOCK_THREADS &&
        *by <= HJ_MAX_BLOCK_THREADS && *bz <= HJ_MAX_BLOCK_THREADS && *bx * *by * *bz > HJ_MAX_BLOCK_THREADS)
      error(n.block[0].loc.known() ? n.block[0].loc : stmt_->loc,
            "block(" + std::to_string(*bx) + ", " + std::to_string(*by) + ", " + std::to_string(*bz) + ") has " +
                std::to_string(*bx * *by * *bz) + " threads; a block has at most " +
                std::to_string(HJ_MAX_BLOCK_THREADS));
    if (n.args.size() != k.params.size()) {
      error(stmt_->loc, "launch of @" + k.name + " passes " + std::to_string(n.args.size()) +
                            " arguments; the kernel declares " + std::to_string(k.params.size()));
    }
    for (size_t i = 0; i < n.args.size(); ++i) {
      const Operand &a = n.args[i];
      if (!use(a) || i >= k.params.size()) continue;
      const ParamType &pt = k.params[i];
      std::string what = "argument " + std::to_string(i + 1) + " of @" + k.name;
      OperandType t = operandType(p_, a);
      if (pt.isTensor()) {
        if (!t.isTensor) error(a.loc, what + " must be " + aType(pt.dtype) + " tensor (" + toString(pt) + ")");
        else if (t.dtype != pt.dtype)
          error(a.loc, what + " must be " + aType(pt.dtype) + " tensor (" + toString(pt) + "); " +
                           name(a.value) + " is " + dtypeName(t.dtype));
        else if (pt.isStruct && p_.value(a.value).rank != pt.rank)
          error(a.loc, what + " must have rank " + std::to_string(pt.rank) + " (" + toString(pt) + "); " +
                           name(a.value) + " has rank " + std::to_string(p_.value(a.value).rank));
        continue;
      }
      if (t.isTensor) {
        error(a.loc, what + " must be " + aType(pt.dtype) + " scalar; " + name(a.value) + " is a tensor");
        continue;
      }
      if (a.kind == Operand::Kind::Value) {
        if (t.dtype != pt.dtype)
          error(a.loc, what + " must be " + dtypeName(pt.dtype) + "; " + name(a.value) + " is " + dtypeName(t.dtype));
      } else if (a.kind == Operand::Kind::Float && !isFloat(pt.dtype)) {
        error(a.loc, what + " must be " + dtypeName(pt.dtype) + ", not a float literal");
      } else if (a.kind == Operand::Kind::Int && !isFloat(pt.dtype)) {
        bool fits = pt.dtype == DType::i64 || (pt.dtype == DType::i32 && a.i >= INT32_MIN && a.i <= INT32_MAX) ||
                    (pt.dtype == DType::Bool && (a.i == 0 || a.i == 1));
        if (!fits) error(a.loc, what + ": literal " + std::to_string(a.i) + " does not fit " + dtypeName(pt.dtype));
      }
    }
  }

  void check(const For &n) {
    intOperand(n.lo, "the loop's start", INT64_MIN);
    intOperand(n.hi, "the loop's end", INT64_MIN);
    if (n.end <= index_ || n.end >= p_.body.size() || p_.body[n.end].kind() != StmtKind::EndFor)
      error(stmt_->loc, "the loop has no closing '}'");
    uint32_t outer = loops_.empty() ? kTop : loops_.back();
    // All inits are checked before the loop takes any (a repeated one is
    // reported as such).
    std::vector<ValueId> taken;
    for (size_t k = 0; k < n.inits.size() && k < n.carried.size(); ++k)
      if (canHandOver(n, k, outer)) taken.push_back(n.inits[k].value);
    for (ValueId v : taken) handedAt_[v.index] = stmt_->loc;
    loops_.push_back(index_);
    loopYielded_.push_back(false);
    define(n.index);  // its scope is the loop
    for (size_t k = 0; k < n.carried.size(); ++k) {
      define(n.carried[k]);
      owned_.push_back(n.carried[k]);
      if (k < n.inits.size() && n.inits[k].isValue()) stream_[n.carried[k].index] = stream_[n.inits[k].value.index];
    }
  }

  // Whether init k of loop n is a buffer of the scope around the loop
  // (`outer`), which the loop may take over; reports why not.
  bool canHandOver(const For &n, size_t k, uint32_t outer) {
    const Operand &o = n.inits[k];
    std::string what = "the init of " + name(n.carried[k]);
    if (!o.isValue()) {
      error(o.loc, what + " must be a buffer");
      return false;
    }
    if (!use(o)) return false;  // defined, visible, not freed, not handed to another loop
    ValueId v = o.value;
    const Value &val = p_.value(v);
    if (!val.isTensor) {
      error(o.loc, what + " must be a buffer; " + name(v) + " is a scalar");
      return false;
    }
    if (!ownsMemory(v)) {
      error(o.loc, what + " must be a buffer the function allocated; " + name(v) + " is " +
                       (val.def == Value::Def::TensorInput ? "a function input, which belongs to the caller"
                                                           : "a view, which owns no memory"));
      return false;
    }
    for (size_t j = 0; j < k; ++j)
      if (n.inits[j].isValue() && n.inits[j].value == v) {
        error(o.loc, name(v) + " is the init of both " + name(n.carried[j]) + " and " + name(n.carried[k]) +
                         "; each carried buffer needs a buffer of its own");
        return false;
      }
    if (scope_[v.index] != outer) {
      error(o.loc, "hands " + name(v) + " to the loop, but it was allocated outside the loop" + at(p_.body[outer].loc) +
                       " around it: that loop's next iteration would hand it over again");
      return false;
    }
    return true;
  }

  // `yield`: the last statement of the body of a loop with iter(...).
  void check(const Yield &n) {
    if (loops_.empty()) {
      error(stmt_->loc, "'yield' outside a loop: only the body of a loop with iter(...) ends with one");
      return;
    }
    uint32_t loop = loops_.back();
    const For &f = std::get<For>(p_.body[loop].node);
    if (f.carried.empty()) {
      error(stmt_->loc, "'yield' in the loop" + at(p_.body[loop].loc) +
                            ", which has no iter(...): it carries no buffers to hand on");
      return;
    }
    if (index_ + 1 != f.end) error(stmt_->loc, "'yield' must be the last statement of the loop's body");
    loopYielded_.back() = true;
    if (n.values.size() != f.carried.size())
      error(stmt_->loc, "yields " + std::to_string(n.values.size()) + " values; the loop" + at(p_.body[loop].loc) +
                            " carries " + buffers(f.carried.size()));
    for (size_t i = 0; i < n.values.size(); ++i) yieldOne(f, loop, n, i);
  }

  void yieldOne(const For &f, uint32_t loop, const Yield &n, size_t i) {
    const Operand &o = n.values[i];
    if (!o.isValue()) {
      error(o.loc, "only buffers can be yielded");
      return;
    }
    if (!use(o)) return;
    ValueId v = o.value;
    if (!p_.value(v).isTensor) {
      error(o.loc, "yields " + name(v) + ", which is a scalar; only buffers can be yielded");
      return;
    }
    if (!ownsMemory(v)) {
      error(o.loc, "yields " + name(v) + "; only buffers the loop's body owns can be yielded" +
                       (p_.value(v).def == Value::Def::TensorInput ? " (it is a function input)" : " (it is a view)"));
      return;
    }
    for (size_t j = 0; j < i; ++j)
      if (n.values[j].isValue() && n.values[j].value == v) {
        error(o.loc, name(v) + " is yielded twice");
        return;
      }
    if (scope_[v.index] != loop) {
      error(o.loc, "yields " + name(v) + ", which was allocated outside the loop" + at(p_.body[loop].loc) +
                       ": its next iteration would hand it on again");
      return;
    }
    yielded_[v.index] = true;
    if (i < f.carried.size()) sameBuffer(f.carried[i], v, o.loc);
  }

  // A yielded buffer v takes the place of carried buffer c: the same dtype,
  // rank, extents, strides, flags and stream, so that `size %c, d` and the
  // allocation contract hold in every iteration and after the loop.
  void sameBuffer(ValueId c, ValueId v, Loc loc) {
    const Value &cv = p_.value(c), &vv = p_.value(v);
    std::string as = "yields " + name(v) + " as " + name(c) + ", but ";
    if (cv.dtype != vv.dtype || cv.rank != vv.rank) {
      error(loc, as + name(v) + " is " + dtypeName(vv.dtype) + " rank " + std::to_string(vv.rank) + " and " + name(c) +
                     " is " + dtypeName(cv.dtype) + " rank " + std::to_string(cv.rank));
      return;
    }
    const Alloc *ca = p_.allocOf(c), *va = p_.allocOf(v);
    if (!ca || !va || ca->extents.size() != va->extents.size()) return;  // a bad init, reported at its loop
    for (size_t d = 0; d < ca->extents.size(); ++d) {
      if (sameSize(ca->extents[d], va->extents[d])) continue;
      const Operand &e = va->extents[d];
      bool indexed = e.isValue() && usesLoopIndex(p_.value(e.value).expr);
      error(loc, as + "its extent " + std::to_string(d) + " is " + printOperand(p_, e) +
                     (indexed ? ", which depends on a loop index," : "") + " where that of " + name(c) + " is " +
                     printOperand(p_, ca->extents[d]) + ": a carried buffer keeps the extents of its init");
      return;
    }
    bool sameStrides = ca->strides.size() == va->strides.size();
    for (size_t d = 0; sameStrides && d < ca->strides.size(); ++d) sameStrides = sameSize(ca->strides[d], va->strides[d]);
    if (!sameStrides) {
      error(loc, as + "its strides are " + stridesText(*va) + " where those of " + name(c) + " are " +
                     stridesText(*ca) + ": a carried buffer keeps the strides of its init");
      return;
    }
    if (ca->zeroInit != va->zeroInit || ca->resetsToZero != va->resetsToZero) {
      error(loc, as + name(v) + " is " + flagsText(*va) + " and " + name(c) + " is " + flagsText(*ca) +
                     ": a carried buffer keeps the flags of its init");
      return;
    }
    if (stream_[c.index] != stream_[v.index])
      error(loc, as + name(v) + " is allocated on " + streamText(stream_[v.index]) + " and " + name(c) + " on " +
                     streamText(stream_[c.index]) + ": a carried buffer stays on the stream of its init");
  }

  // Whether two size operands are the same expression (they fold alike).
  bool sameSize(const Operand &a, const Operand &b) const {
    auto literal = [&](const Operand &o) -> std::optional<int64_t> {
      if (o.kind == Operand::Kind::Int) return o.i;
      if (o.isValue() && constant(o)) return p_.exprs[p_.value(o.value).expr].i;
      return std::nullopt;
    };
    if (auto la = literal(a), lb = literal(b); la || lb) return la == lb;
    return a.isValue() && b.isValue() && p_.value(a.value).expr.valid() &&
           p_.value(a.value).expr == p_.value(b.value).expr;
  }

  bool usesLoopIndex(ExprId e) const {
    if (!e.valid()) return false;
    const Expr &x = p_.exprs[e];
    if (x.kind == Expr::Kind::LoopIndex) return true;
    bool uses = false;
    forEachOperand(x, [&](ExprId o) { uses = uses || usesLoopIndex(o); });
    return uses;
  }

  std::string stridesText(const Alloc &a) const {
    if (a.strides.empty()) return "contiguous";
    std::string s = "strides[";
    for (size_t d = 0; d < a.strides.size(); ++d) s += (d ? ", " : "") + printOperand(p_, a.strides[d]);
    return s + "]";
  }
  static std::string flagsText(const Alloc &a) {
    if (a.resetsToZero) return "zero_init resets_to_zero";
    return a.zeroInit ? "zero_init" : "without flags";
  }
  std::string streamText(uint32_t s) const {
    return s == kTop ? "the main stream" : "stream %" + p_.values[s].name;
  }

  // The end of a loop: what its body allocated, and its carried buffers,
  // must be freed or yielded in it; its results are defined from here on.
  void check(const EndFor &n) {
    if (loops_.empty() || loops_.back() != n.begin) {
      error(stmt_->loc, "'}' closes no open loop");
      return;
    }
    const For &f = std::get<For>(p_.body[n.begin].node);
    std::string loop = "the loop" + at(p_.body[n.begin].loc);
    bool yielded = loopYielded_.back();
    if (!f.carried.empty() && !yielded)
      error(stmt_->loc, loop + " carries " + buffers(f.carried.size()) + " but its body does not end with 'yield'");
    for (ValueId v : owned_) {
      if (scope_[v.index] != n.begin || freedAt_[v.index] || handedAt_[v.index] || yielded_[v.index]) continue;
      if (!f.carried.empty() && !yielded) continue;  // the missing yield says it
      if (std::find(f.carried.begin(), f.carried.end(), v) != f.carried.end())
        error(p_.value(v).loc, name(v) + " is carried by " + loop +
                                   " but neither freed nor yielded in its body: each iteration must free or yield it");
      else if (f.carried.empty())
        error(p_.value(v).loc, "buffer " + name(v) + " is allocated in " + loop +
                                   " but not freed in it: each iteration must free what it allocates");
      else
        error(p_.value(v).loc, "buffer " + name(v) + " is allocated in " + loop +
                                   " but neither freed nor yielded in it: each iteration must free or yield what it "
                                   "allocates");
    }
    loops_.pop_back();
    loopYielded_.pop_back();
    for (size_t k = 0; k < f.results.size(); ++k) {
      define(f.results[k]);
      owned_.push_back(f.results[k]);
      if (k < f.carried.size()) stream_[f.results[k].index] = stream_[f.carried[k].index];
    }
  }

  void check(const StreamDef &n) {
    if (++streams_ == kMaxStreams)
      error(stmt_->loc, "more than " + std::to_string(kMaxStreams - 1) + " streams in one program");
    define(n.result);
  }

  void check(const On &n) {
    handleOperand(n.stream, Value::Handle::Stream, "on");
    if (n.end <= index_ || n.end >= p_.body.size() || p_.body[n.end].kind() != StmtKind::EndOn)
      error(stmt_->loc, "the 'on' block has no closing '}'");
    ons_.push_back(index_);
  }

  void check(const EndOn &n) {
    if (ons_.empty() || ons_.back() != n.begin) {
      error(stmt_->loc, "'}' closes no open 'on' block");
      return;
    }
    ons_.pop_back();
  }

  void check(const Record &n) {
    if (++events_ == kMaxEvents + 1) error(stmt_->loc, "more than " + std::to_string(kMaxEvents) + " events in one program");
    define(n.result);
  }

  void check(const Wait &n) { handleOperand(n.event, Value::Handle::Event, "wait"); }

  void check(const Sync &) {}

  void check(const CommQuery &n) { define(n.result); }

  // The tensors of a collective: contiguous memory of a dtype NCCL moves.
  bool collectiveTensor(const Operand &o, const std::string &what) {
    if (!o.isValue()) {
      error(o.loc, what + " must be a tensor");
      return false;
    }
    if (!use(o)) return false;
    const Value &v = p_.value(o.value);
    if (!v.isTensor) {
      error(o.loc, what + " must be a tensor; " + name(o.value) + " is a scalar");
      return false;
    }
    if (p_.rootOf(o.value) != o.value) {
      error(o.loc, what + " must be a buffer or an input, not a view (" + name(o.value) + ")");
      return false;
    }
    const Alloc *al = p_.allocOf(o.value);
    if (al && !al->strides.empty()) {
      error(o.loc, what + " must be contiguous; " + name(o.value) + " has explicit strides");
      return false;
    }
    if (al) {  // the count is the product of the extents: the constant ones must not overflow
      int64_t product = 1;
      for (const Operand &e : al->extents) {
        if (!constant(e)) continue;
        int64_t x = e.isValue() ? p_.exprs[p_.value(e.value).expr].i : e.i;
        if (__builtin_mul_overflow(product, x, &product)) {
          error(o.loc, what + ": the element count of " + name(o.value) + " overflows");
          return false;
        }
      }
    }
    if (v.dtype == DType::Bool || v.dtype == DType::i16) {
      error(o.loc, what + ": collectives move f16, bf16, f32, f64, i8, u8, i32, u32, i64 and u64, not " +
                       dtypeName(v.dtype));
      return false;
    }
    return true;
  }

  void check(const Collective &n) {
    using K = Collective::Kind;
    std::string kw = std::string("'") + collectiveKeyword(n.kind) + "'";
    bool src = n.kind != K::Recv, dst = n.kind != K::Send;
    bool ok = (!src || collectiveTensor(n.src, "the source of " + kw)) &
              (!dst || collectiveTensor(n.dst, "the destination of " + kw));
    if (ok && src && dst && p_.value(n.src.value).dtype != p_.value(n.dst.value).dtype)
      error(n.dst.loc, "the source and destination of " + kw + " have different dtypes: " +
                           dtypeName(p_.value(n.src.value).dtype) + " and " + dtypeName(p_.value(n.dst.value).dtype));
    if (n.kind == K::Broadcast) intOperand(n.peer, "the root of " + kw, 0);
    if (n.kind == K::Send || n.kind == K::Recv) intOperand(n.peer, "the peer of " + kw, 0);
  }

  void check(const Return &n) {
    if (!ons_.empty()) error(stmt_->loc, "'return' inside an 'on' block; it must be the last statement of the function");
    else if (!loops_.empty()) error(stmt_->loc, "'return' inside a loop; it must be the last statement of the function");
    else if (stmt_ != &p_.body.back()) error(stmt_->loc, "'return' must be the last statement");
    if (n.values.size() != p_.results.size())
      error(stmt_->loc, "returns " + std::to_string(n.values.size()) + " values; the signature declares " +
                            std::to_string(p_.results.size()));
    for (size_t i = 0; i < n.values.size(); ++i) {
      const Operand &o = n.values[i];
      if (!o.isValue()) {
        error(o.loc, "only buffers can be returned");
        continue;
      }
      if (!defined_[o.value.index]) {
        error(o.loc, "use of " + name(o.value) + " before its definition");
        continue;
      }
      if (!visible(o.value, o.loc)) continue;
      if (freedAt_[o.value.index]) {
        error(o.loc, "returns " + name(o.value) + ", which was freed" + at(*freedAt_[o.value.index]));
        continue;
      }
      if (handedAt_[o.value.index]) {
        error(o.loc, "returns " + name(o.value) + ", which was handed to the loop" + at(*handedAt_[o.value.index]) +
                         " (return the loop's result instead)");
        continue;
      }
      const Value &v = p_.value(o.value);
      if (!ownsMemory(o.value)) {
        error(o.loc, "returns " + name(o.value) + "; only buffers allocated by the function can be returned" +
                         std::string(p_.rootOf(o.value) != o.value ? " (it is a view)" : ""));
        continue;
      }
      for (size_t j = 0; j < i; ++j)
        if (n.values[j].isValue() && n.values[j].value == o.value) error(o.loc, name(o.value) + " is returned twice");
      returned_.push_back(o.value);
      if (i >= p_.results.size()) continue;
      const TensorType &rt = p_.results[i];
      const Alloc *found = p_.allocOf(o.value);
      if (!found) continue;  // a carried chain with a bad init, reported at its loop
      const Alloc &al = *found;
      if (al.resetsToZero)
        error(o.loc, "returns " + name(o.value) + ", which is resets_to_zero: a returned buffer holds results, "
                     "which no kernel resets; drop resets_to_zero");
      if (v.dtype != rt.dtype || v.rank != rt.dims.size()) {
        error(o.loc, "returns " + name(o.value) + " of type " + dtypeName(v.dtype) + " rank " + std::to_string(v.rank) +
                         "; the signature declares " + toString(rt));
        continue;
      }
      for (size_t d = 0; d < rt.dims.size(); ++d) {
        // Extents known when the program is built (literals, or values that
        // fold to constants) are checked here; the others at run time.
        const Operand &x = al.extents[d];
        std::optional<int64_t> known;
        if (x.kind == Operand::Kind::Int) known = x.i;
        else if (x.isValue() && constant(x)) known = p_.exprs[p_.value(x.value).expr].i;
        if (rt.dims[d] != kDynamic && known && *known != rt.dims[d])
          error(o.loc, "returns " + name(o.value) + " whose dim " + std::to_string(d) + " is " +
                           std::to_string(*known) + "; the signature declares " + toString(rt));
      }
    }
  }

  void check(const std::monostate &) {}

  void checkLeaks() {
    for (ValueId v : owned_) {
      if (freedAt_[v.index] || handedAt_[v.index] || scope_[v.index] != kTop) continue;  // a loop's buffers: reported at its end
      bool returned = false;
      for (ValueId r : returned_) returned |= r == v;
      if (!returned) {
        stmt_ = &p_.body[p_.value(v).defIndex];
        error(p_.value(v).loc, "buffer " + name(v) + " is neither freed nor returned (leak)");
      }
    }
    stmt_ = nullptr;
  }

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

}  // namespace

Diagnostics verify(const Program &p) { return Verifier(p).run(); }

}  // namespace hostjit
