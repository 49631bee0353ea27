// size_expr_ops.cpp - a SizeExpr built as Host IR scalar operations.
#include "size_expr_ops.h"

#include "hostjit/fusion/analysis.h"
#include "hostjit/text/text.h"

namespace hostjit {

std::string SizeExprOps::fresh(const std::string &want) {
  std::string n = want;
  for (int k = 1; !used_.insert(n).second; ++k) n = want + "_" + std::to_string(k);
  return n;
}

Operand SizeExprOps::build(const SizeExpr &e, const std::string &name, const std::string &origin, const Names &names) {
  if (auto c = fusion::foldLiterals(e)) return *c;
  switch (e.kind()) {
    case SizeExpr::Kind::Scalar: return names.scalar(e.name());
    case SizeExpr::Kind::Size:
    case SizeExpr::Kind::Stride: {
      ValueId t = names.tensor(e.name());
      const std::string &tn = b_.program().value(t).name;
      bool size = e.kind() == SizeExpr::Kind::Size;
      return memoOp(std::string(size ? "_size" : "_stride") + std::to_string(e.dim()) + "%" + tn,
                    tn + (size ? "_size" : "_stride") + std::to_string(e.dim()), origin,
                    size ? OpCode::Size : OpCode::Stride, Operand::of(t), Operand::integer(e.dim()));
    }
    case SizeExpr::Kind::Op: {
      const std::vector<SizeExpr> &x = e.operands();
      Operand ops[3] = {Operand::integer(0), Operand::integer(0), Operand::integer(0)};
      std::string key = opName(e.op());
      for (size_t k = 0; k < x.size(); ++k) {
        ops[k] = build(x[k], name + "_" + std::string(1, static_cast<char>('a' + k)), origin, names);
        key += (k ? ", " : " ") + printOperand(b_.program(), ops[k]);
      }
      return memoOp(key, name, origin, e.op(), ops[0], ops[1], ops[2]);
    }
    default: return Operand::integer(0);  // literals were folded
  }
}

Operand SizeExprOps::memoOp(const std::string &key, const std::string &name, const std::string &origin, OpCode op,
                            Operand a, Operand b, Operand c) {
  if (auto it = memo_.find(key); it != memo_.end()) return Operand::of(it->second);
  unsigned arity = opArity(op);
  ValueId v = arity == 1   ? b_.unary(fresh(name), op, a)
              : arity == 3 ? b_.select(fresh(name), a, b, c)
                           : b_.op(fresh(name), op, a, b);
  b_.program().body.back().origin = origin;
  memo_[key] = v;
  return Operand::of(v);
}

}  // namespace hostjit
