// verify_statements.cpp - the rules of scalar operations, launches, calls,
// collectives, matmuls and return (buffers: verify_buffers.cpp).
#include "verifier_impl.h"

namespace hostjit::verify_detail {

std::optional<int64_t> Verifier::known(const Operand &o) const {
  if (o.kind == Operand::Kind::Float) return std::nullopt;
  if (o.isValue() && (!defined_[o.value.index] || p_.value(o.value).isTensor || isFloat(p_.value(o.value).dtype) ||
                      !constant(o)))
    return std::nullopt;
  return value(o);
}

void Verifier::check(const ScalarOp &n) {
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

std::string Verifier::foldError(const ScalarOp &n, DType resultType) const {
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

double Verifier::floatValue(const Operand &o) const {
  if (o.isValue()) return p_.exprs[p_.value(o.value).expr].f;
  return o.kind == Operand::Kind::Float ? o.f : static_cast<double>(o.i);
}

bool Verifier::constant(const Operand &o) const {
  if (!o.isValue()) return true;
  ExprId e = p_.value(o.value).expr;
  return e.valid() && p_.exprs[e].kind == Expr::Kind::Const;
}

bool Verifier::literalsFit(const ScalarOp &n) {
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

void Verifier::check(const Launch &n) {
  const Kernel &k = p_.kernel(n.kernel);
  if (k.custom) {
    error(stmt_->loc, "@" + k.name + " is a custom call, not a kernel; run it with call");
    return;
  }
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
  if (k.block && bx && by && bz && (*bx != (*k.block)[0] || *by != (*k.block)[1] || *bz != (*k.block)[2]))
    error(n.block[0].loc.known() ? n.block[0].loc : stmt_->loc,
          "launch of @" + k.name + " with block(" + std::to_string(*bx) + ", " + std::to_string(*by) + ", " +
              std::to_string(*bz) + "); the kernel was compiled for block(" + std::to_string((*k.block)[0]) + ", " +
              std::to_string((*k.block)[1]) + ", " + std::to_string((*k.block)[2]) + ")");
  if (k.cluster)
    for (int i = 0; i < 3; ++i) {
      auto g = known(n.grid[i]);
      int64_t c = (*k.cluster)[i];
      if (g && c >= 1 && *g >= 1 && *g % c != 0)
        error(n.grid[i].loc.known() ? n.grid[i].loc : stmt_->loc,
              std::string("grid.") + axes[i] + " is " + std::to_string(*g) + ", not a multiple of @" + k.name +
                  "'s cluster." + axes[i] + " " + std::to_string(c) + "; the grid counts blocks");
    }
  checkArgs(k, n.args, "launch of");
}

void Verifier::check(const Call &n) {
  const Kernel &k = p_.kernel(n.callee);
  if (!k.custom) {
    error(stmt_->loc, "@" + k.name + " is a kernel, not a custom call; launch it");
    return;
  }
  checkArgs(k, n.args, "call of");
}

void Verifier::checkArgs(const Kernel &k, const std::vector<Operand> &args, const char *verb) {
  if (args.size() != k.params.size()) {
    error(stmt_->loc, std::string(verb) + " @" + k.name + " passes " + std::to_string(args.size()) +
                          " arguments; " + (k.custom ? "the custom call" : "the kernel") + " declares " +
                          std::to_string(k.params.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Operand &a = args[i];
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

bool Verifier::rootTensor(const Operand &o, const std::string &what) {
  if (!tensorValue(o, what)) return false;
  if (p_.rootOf(o.value) != o.value) {
    error(o.loc, what + " must be a buffer or an input, not a view (" + name(o.value) + ")");
    return false;
  }
  return true;
}

bool Verifier::tensorValue(const Operand &o, const std::string &what) {
  if (!o.isValue()) {
    error(o.loc, what + " must be a tensor");
    return false;
  }
  if (!use(o)) return false;
  if (!p_.value(o.value).isTensor) {
    error(o.loc, what + " must be a tensor; " + name(o.value) + " is a scalar");
    return false;
  }
  return true;
}

bool Verifier::collectiveTensor(const Operand &o, const std::string &what) {
  if (!rootTensor(o, what)) return false;
  const Value &v = p_.value(o.value);
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

void Verifier::check(const Collective &n) {
  using K = Collective::Kind;
  std::string kw = std::string("'") + collectiveKeyword(n.kind) + "'";
  bool src = n.kind != K::Recv, dst = n.kind != K::Send;
  bool ok = (!src || collectiveTensor(n.src, "the source of " + kw)) &
            (!dst || collectiveTensor(n.dst, "the destination of " + kw));
  if (ok && src && dst && p_.value(n.src.value).dtype != p_.value(n.dst.value).dtype)
    error(n.dst.loc, "the source and destination of " + kw + " have different dtypes: " +
                         dtypeName(p_.value(n.src.value).dtype) + " and " + dtypeName(p_.value(n.dst.value).dtype));
  if (ok && dst) writes(n.dst, "the destination of " + kw);
  if (n.kind == K::Broadcast) intOperand(n.peer, "the root of " + kw, 0);
  if (n.kind == K::Send || n.kind == K::Recv) intOperand(n.peer, "the peer of " + kw, 0);
}

bool Verifier::matmulTensor(const Operand &o, const std::string &what, uint32_t minRank, uint32_t maxRank) {
  if (!tensorValue(o, what)) return false;
  const Value &v = p_.value(o.value);
  if (v.rank < minRank || v.rank > maxRank) {
    error(o.loc, what + " must have rank " + std::to_string(minRank) +
                     (minRank == maxRank ? "" : " or " + std::to_string(maxRank)) + "; " + name(o.value) +
                     " has rank " + std::to_string(v.rank));
    return false;
  }
  return true;
}

std::optional<int64_t> Verifier::staticDim(ValueId v, uint32_t d) const {
  const Value &val = p_.value(v);
  if (val.def == Value::Def::TensorInput)
    return val.inputDims[d] == kDynamic ? std::nullopt : std::optional<int64_t>(val.inputDims[d]);
  if (val.def == Value::Def::Stmt && val.defIndex < p_.body.size())
    if (const auto *view = std::get_if<View>(&p_.body[val.defIndex].node))
      return d < view->extents.size() ? known(view->extents[d]) : std::nullopt;
  const Alloc *al = p_.allocOf(v);
  if (!al || d >= al->extents.size()) return std::nullopt;
  return known(al->extents[d]);
}

void Verifier::check(const Matmul &n) {
  bool ok = matmulTensor(n.a, "matmul's A", 2, 3) & matmulTensor(n.b, "matmul's B", 2, 3) &
            matmulTensor(n.c, "matmul's C", 2, 3);
  bool bias = n.bias.isValue(), ws = n.workspace.isValue();
  if (bias) ok &= matmulTensor(n.bias, "matmul's bias", 1, 1);
  if (ws) ok &= matmulTensor(n.workspace, "matmul's workspace", 1, 1);
  if (!ok) return;
  const Value &a = p_.value(n.a.value), &b = p_.value(n.b.value), &c = p_.value(n.c.value);
  if (a.dtype != DType::f32 && a.dtype != DType::f16 && a.dtype != DType::bf16)
    error(n.a.loc, "matmul's A is " + std::string(dtypeName(a.dtype)) + "; a matmul takes f32, f16 or bf16");
  else if (b.dtype != a.dtype)
    error(n.b.loc, "matmul's B is " + std::string(dtypeName(b.dtype)) + "; it must be A's dtype, " + dtypeName(a.dtype));
  else if (c.dtype != DType::f32 && c.dtype != a.dtype)
    error(n.c.loc, "matmul's C is " + std::string(dtypeName(c.dtype)) + "; with " + dtypeName(a.dtype) +
                       " inputs it must be f32 or " + dtypeName(a.dtype));
  if (bias && p_.value(n.bias.value).dtype != c.dtype)
    error(n.bias.loc, "matmul's bias is " + std::string(dtypeName(p_.value(n.bias.value).dtype)) +
                          "; it must be C's dtype, " + dtypeName(c.dtype));
  if (ws && p_.value(n.workspace.value).dtype != DType::u8)
    error(n.workspace.loc, "matmul's workspace is " + std::string(dtypeName(p_.value(n.workspace.value).dtype)) +
                               "; it must be a u8 buffer");
  if (c.rank == 2 && (a.rank == 3 || b.rank == 3))
    error(n.c.loc, "matmul's C has rank 2 while A or B has a batch dim: C must be [batches, rows, cols]");
  // A dim fixed at 0 fails every call: the runtime takes 1 to 2^40.
  const Operand *operands[] = {&n.a, &n.b, &n.c};
  for (int x = 0; x < 3; ++x) {
    const Value &v = p_.value(operands[x]->value);
    for (uint32_t d = 0; d < v.rank; ++d)
      if (staticDim(operands[x]->value, d) == 0)
        error(operands[x]->loc, "matmul's " + std::string("ABC").substr(x, 1) + " " + name(operands[x]->value) +
                                    " has dim " + std::to_string(d) +
                                    " of 0; a matmul's batches, rows and columns are at least 1");
  }
  // The dims the program fixes must agree.
  auto dim = [&](ValueId v, uint32_t rank, int fromEnd) { return staticDim(v, rank - fromEnd); };
  auto rows = [&](ValueId v, uint32_t r, bool t) { return dim(v, r, t ? 1 : 2); };
  auto cols = [&](ValueId v, uint32_t r, bool t) { return dim(v, r, t ? 2 : 1); };
  auto ak = cols(n.a.value, a.rank, n.transposeA), bk = rows(n.b.value, b.rank, n.transposeB);
  auto am = rows(n.a.value, a.rank, n.transposeA), bn = cols(n.b.value, b.rank, n.transposeB);
  auto cm = dim(n.c.value, c.rank, 2), cn = dim(n.c.value, c.rank, 1);
  auto show = [](std::optional<int64_t> x) { return x ? std::to_string(*x) : std::string("?"); };
  if (ak && bk && *ak != *bk)
    error(n.b.loc, "matmul: op(A) has " + show(ak) + " columns and op(B) " + show(bk) + " rows; they must agree");
  if ((am && cm && *am != *cm) || (bn && cn && *bn != *cn))
    error(n.c.loc, "matmul: C is " + show(cm) + " x " + show(cn) + "; op(A) op(B) is " + show(am) + " x " + show(bn));
  if (bias) {
    auto be = staticDim(n.bias.value, 0);
    if (be && bn && *be != *bn)
      error(n.bias.loc, "matmul's bias has " + show(be) + " elements; op(B) has " + show(bn) + " columns");
    if (auto stride = staticStride(n.bias.value, 0); stride && *stride != 1 && !(be && *be <= 1))
      error(n.bias.loc, "matmul's bias " + name(n.bias.value) + " has a stride of " + std::to_string(*stride) +
                            "; a matmul reads the bias's elements adjacent (stride 1)");
  }
  // One root means shared memory, unless both are constant ranges of it
  // that do not meet (slices of one buffer).
  ValueId cRoot = p_.rootOf(n.c.value);
  const Operand *readers[] = {&n.a, &n.b, bias ? &n.bias : nullptr};
  const char *what[] = {"A", "B", "the bias"};
  bool overflow = false;
  auto cRange = knownElements(n.c.value, &overflow);
  auto apart = [&](ValueId r) {
    auto range = knownElements(r, &overflow);
    return cRange && range && (range->second <= cRange->first || cRange->second <= range->first);
  };
  for (int x = 0; x < 3; ++x)
    if (readers[x] && p_.rootOf(readers[x]->value) == cRoot && !apart(readers[x]->value))
      error(n.c.loc, "matmul's C " + name(n.c.value) + " is in the memory of " + what[x] + ", " +
                         name(readers[x]->value) + "; a matmul reads " + what[x] +
                         " while it writes C, so C must be a buffer of its own");
  writes(n.c, "matmul's C");
}

// A statement that writes `o`: when it is (a view of) a function input,
// the signature must say the program writes it.
void Verifier::writes(const Operand &o, const std::string &what) {
  if (!o.isValue()) return;
  ValueId root = p_.rootOf(o.value);
  const Value &r = p_.value(root);
  if (r.def == Value::Def::TensorInput && !r.written)
    error(o.loc, what + " " + name(o.value) + " is" + (root == o.value ? "" : " in") + " function input " +
                     name(root) + ", which the program writes: declare it `" + name(root) + ": " +
                     toString(TensorType{r.dtype, r.inputDims}) + " written`");
}

std::optional<int64_t> Verifier::staticStride(ValueId v, uint32_t d) const {
  const Value &val = p_.value(v);
  const std::vector<Operand> *strides = nullptr;
  if (val.def == Value::Def::Stmt && val.defIndex < p_.body.size())
    if (const auto *view = std::get_if<View>(&p_.body[val.defIndex].node)) strides = &view->strides;
  if (const Alloc *al = strides ? nullptr : p_.allocOf(v)) strides = &al->strides;
  if (!strides || d >= strides->size()) return std::nullopt;
  return known((*strides)[d]);
}

void Verifier::check(const Return &n) {
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

}  // namespace hostjit::verify_detail
