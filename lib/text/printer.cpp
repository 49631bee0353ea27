// printer.cpp - prints a Program as canonical .hir text.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hostjit/text/text.h"

namespace hostjit {

std::string floatLiteralText(double f) {
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (std::isnan(f)) return "nan";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

void leading(std::string &out, const Comments &c, const char *indent) {
  for (const std::string &l : c.leading) out += indent + std::string("//") + l + "\n";
}

void endLine(std::string &out, const Comments &c) {
  if (!c.trailing.empty()) out += "  //" + c.trailing;
  out += "\n";
}

std::string list(const Program &p, const std::vector<Operand> &ops) {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) s += ", ";
    s += printOperand(p, ops[i]);
  }
  return s;
}

}  // namespace

std::string printOperand(const Program &p, const Operand &o) {
  switch (o.kind) {
    case Operand::Kind::Value: return "%" + p.value(o.value).name;
    case Operand::Kind::Int: return std::to_string(o.i);
    case Operand::Kind::Float: return floatLiteralText(o.f);
  }
  return "?";
}

std::string printStmt(const Program &p, const Stmt &s) {
  return std::visit(
      [&](const auto &n) -> std::string {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ScalarOp>) {
          std::string r = "%" + p.value(n.result).name + " = " + opName(n.op) + " " + printOperand(p, n.a);
          if (opArity(n.op) > 1) r += ", " + printOperand(p, n.b);
          if (opArity(n.op) > 2) r += ", " + printOperand(p, n.c);
          return r;
        } else if constexpr (std::is_same_v<T, Alloc>) {
          std::string r = "%" + p.value(n.result).name + " = alloc " + dtypeName(n.dtype) + "[" + list(p, n.extents) + "]";
          if (!n.strides.empty()) r += " strides[" + list(p, n.strides) + "]";
          if (n.zeroInit) r += " zero_init";
          if (n.resetsToZero) r += " resets_to_zero";
          return r;
        } else if constexpr (std::is_same_v<T, View>) {
          std::string r = "%" + p.value(n.result).name + " = view " + printOperand(p, n.base) + "[" + list(p, n.extents) + "]";
          if (!n.strides.empty()) r += " strides[" + list(p, n.strides) + "]";
          if (n.offset.isValue() || n.offset.i != 0) r += " offset " + printOperand(p, n.offset);
          return r;
        } else if constexpr (std::is_same_v<T, Free>) {
          return "free " + printOperand(p, n.tensor);
        } else if constexpr (std::is_same_v<T, Launch>) {
          auto three = [&](const std::array<Operand, 3> &a) { return list(p, {a[0], a[1], a[2]}); };
          return "launch @" + p.kernel(n.kernel).name + " grid(" + three(n.grid) + ") block(" + three(n.block) +
                 ") smem(" + printOperand(p, n.smem) + ") (" + list(p, n.args) + ")";
        } else if constexpr (std::is_same_v<T, For>) {
          std::string r;
          for (size_t k = 0; k < n.results.size(); ++k) r += (k ? ", %" : "%") + p.value(n.results[k]).name;
          if (!r.empty()) r += " = ";
          r += "for %" + p.value(n.index).name + " = " + printOperand(p, n.lo) + " to " + printOperand(p, n.hi);
          for (size_t k = 0; k < n.carried.size(); ++k)
            r += (k ? ", %" : " iter(%") + p.value(n.carried[k]).name + " = " +
                 (k < n.inits.size() ? printOperand(p, n.inits[k]) : std::string("?"));
          return r + (n.carried.empty() ? " {" : ") {");
        } else if constexpr (std::is_same_v<T, Yield>) {
          return n.values.empty() ? "yield" : "yield " + list(p, n.values);
        } else if constexpr (std::is_same_v<T, EndFor> || std::is_same_v<T, EndOn>) {
          return "}";
        } else if constexpr (std::is_same_v<T, StreamDef>) {
          return "%" + p.value(n.result).name + " = stream";
        } else if constexpr (std::is_same_v<T, On>) {
          return "on " + printOperand(p, n.stream) + " {";
        } else if constexpr (std::is_same_v<T, Record>) {
          return "%" + p.value(n.result).name + " = record";
        } else if constexpr (std::is_same_v<T, Wait>) {
          return "wait " + printOperand(p, n.event);
        } else if constexpr (std::is_same_v<T, Sync>) {
          return "sync";
        } else if constexpr (std::is_same_v<T, CommQuery>) {
          return "%" + p.value(n.result).name + (n.world ? " = world" : " = rank");
        } else if constexpr (std::is_same_v<T, Collective>) {
          static const char *ops[] = {"sum", "prod", "max", "min"};
          std::string r = collectiveKeyword(n.kind);
          using K = Collective::Kind;
          if (n.kind == K::AllReduce || n.kind == K::ReduceScatter) r += std::string(" ") + ops[n.op & 3];
          switch (n.kind) {
            case K::Send: return r + " " + printOperand(p, n.src) + ", " + printOperand(p, n.peer);
            case K::Recv: return r + " " + printOperand(p, n.dst) + ", " + printOperand(p, n.peer);
            case K::Broadcast:
              return r + " " + printOperand(p, n.src) + ", " + printOperand(p, n.dst) + ", " + printOperand(p, n.peer);
            default: return r + " " + printOperand(p, n.src) + ", " + printOperand(p, n.dst);
          }
        } else if constexpr (std::is_same_v<T, Matmul>) {
          std::string r = "matmul " + printOperand(p, n.a) + ", " + printOperand(p, n.b) + ", " + printOperand(p, n.c);
          if (n.transposeA) r += " transpose_a";
          if (n.transposeB) r += " transpose_b";
          auto number = [](double v) {
            char buf[40];
            std::snprintf(buf, sizeof buf, "%.17g", v);
            std::string t = buf;
            if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
            return t;
          };
          if (n.alpha != 1.0) r += " alpha " + number(n.alpha);
          if (n.beta != 0.0) r += " beta " + number(n.beta);
          if (n.bias.isValue()) r += " bias " + printOperand(p, n.bias);
          if (n.workspace.isValue()) r += " workspace " + printOperand(p, n.workspace);
          return r;
        } else if constexpr (std::is_same_v<T, Call>) {
          return "call @" + p.kernel(n.callee).name + "(" + list(p, n.args) + ")";
        } else if constexpr (std::is_same_v<T, Return>) {
          return n.values.empty() ? "return" : "return " + list(p, n.values);
        } else {
          return "<invalid>";
        }
      },
      s.node);
}

std::string printKernel(const Kernel &k, const KernelComments *comments) {
  static const KernelComments noKernel;
  const KernelComments &kc = comments ? *comments : noKernel;
  std::string out;
  leading(out, kc.decl, "");
  out += (k.custom ? "custom @" : "kernel @") + k.name + "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (i) out += ", ";
    out += toString(k.params[i]);
  }
  out += ") {";
  endLine(out, kc.decl);
  // Each attribute the declaration has, in kernel_attrs.def's order.
  auto line = [&](const char *name, const std::string &v, const Comments &c) {
    leading(out, c, "  ");
    out += std::string("  ") + name + " = " + v;
    endLine(out, c);
  };
  auto attr = [&](const char *name, const auto &v, const Comments &c) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, bool>) {
      if (v) line(name, "true", c);
    } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
      if (v) line(name, quote(*v), c);
    } else {
      if (v)
        line(name, "(" + std::to_string((*v)[0]) + ", " + std::to_string((*v)[1]) + ", " + std::to_string((*v)[2]) + ")",
             c);
    }
  };
#define HOSTJIT_KERNEL_ATTR(key, member, kind, owner, example) attr(key, k.member, kc.member);
#include "hostjit/ir/kernel_attrs.def"
#undef HOSTJIT_KERNEL_ATTR
  leading(out, kc.closing, "  ");
  out += "}";
  endLine(out, kc.closing);
  return out;
}

std::string print(const Program &p, const ProgramComments *comments) {
  static const Comments none;
  auto stmtComments = [&](size_t i) -> const Comments & {
    return comments && i < comments->stmts.size() ? comments->stmts[i] : none;
  };
  std::string out;
  for (size_t ki = 0; ki < p.kernels.size(); ++ki)
    out += printKernel(p.kernels[ki], comments && ki < comments->kernels.size() ? &comments->kernels[ki] : nullptr) + "\n";
  const Comments &func = comments ? comments->func : none;
  leading(out, func, "");
  out += "func @" + p.funcName + "(";
  for (size_t i = 0; i < p.params.size(); ++i) {
    const Value &v = p.value(p.params[i]);
    if (i) out += ", ";
    out += "%" + v.name + ": ";
    out += v.isTensor ? toString(TensorType{v.dtype, v.inputDims}) : dtypeName(v.dtype);
    if (v.written) out += " written";
  }
  out += ") -> (";
  for (size_t i = 0; i < p.results.size(); ++i) {
    if (i) out += ", ";
    out += toString(p.results[i]);
  }
  out += ") {";
  endLine(out, func);
  // A block's body (a loop's, an `on`'s) is indented one step more; the
  // comments above its '}' belong to the body.
  size_t depth = 1;
  for (size_t i = 0; i < p.body.size(); ++i) {
    const Stmt &s = p.body[i];
    const Comments &c = stmtComments(i);
    bool closes = (s.kind() == StmtKind::EndFor || s.kind() == StmtKind::EndOn) && depth > 1;
    std::string indent(2 * depth, ' ');
    leading(out, c, indent.c_str());
    if (closes) indent.resize(2 * --depth);
    out += indent + printStmt(p, s);
    endLine(out, c);
    if (s.kind() == StmtKind::For || s.kind() == StmtKind::On) ++depth;
  }
  const Comments &closing = comments ? comments->funcClosing : none;
  leading(out, closing, "  ");
  out += "}";
  endLine(out, closing);
  if (comments)
    for (const std::string &c : comments->trailing) out += "//" + c + "\n";
  return out;
}

}  // namespace hostjit
