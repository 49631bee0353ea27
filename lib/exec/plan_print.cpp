// plan_print.cpp - printPlan: a plan in a stable text form, every field by
// name, walked through the plan's field lists (HOSTJIT_FIELDS).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "hostjit/exec/plan.h"

namespace hostjit {

namespace {

template <class T>
concept HasFields = requires(const T &t) { t.forEachField([](const char *, const auto &) {}); };

std::string quoted(const std::string &s) {
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

// "e3", "s0", "loop1": a reference as the printer writes it.
std::string ref(const char *prefix, uint32_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%u", prefix, index);
  return buf;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const char *paramName(int32_t kind) {
  switch (kind & 0xff) {
    case HJ_PARAM_PTR: return "ptr";
    case HJ_PARAM_I32: return "i32";
    case HJ_PARAM_I64: return "i64";
    case HJ_PARAM_F32: return "f32";
    case HJ_PARAM_F64: return "f64";
    case HJ_PARAM_BOOL: return "bool";
    case HJ_PARAM_TENSOR: return "tensor";
  }
  return "?";
}

// One value of a field, as text.
class Text {
 public:
  template <class T>
    requires std::is_integral_v<T>
  static std::string of(const T &v) {
    if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
    else return std::to_string(v);
  }
  static std::string of(double v) { return number(v); }
  static std::string of(const std::string &s) { return quoted(s); }
  static std::string of(DType t) { return dtypeName(t); }
  static std::string of(OpCode op) { return opName(op); }
  static std::string of(CollectiveKind k) { return collectiveKeyword(k); }
  static std::string of(Expr::Kind k) {
    static const char *names[] = {"const", "size", "stride", "scalar", "binary", "index", "rank", "world"};
    return names[static_cast<size_t>(k)];
  }
  static std::string of(const ExprId &r) { return r.valid() ? ref("e", r.index) : "none"; }
  static std::string of(const ExprRef &r) { return ref("e", r.index); }
  static std::string of(const SlotRef &r) { return ref("s", r.index); }
  static std::string of(const InputRef &r) { return ref("in", r.index); }
  static std::string of(const KernelRef &r) { return ref("k", r.index); }
  static std::string of(const LoopRef &r) { return r.valid() ? ref("loop", r.index) : "none"; }
  static std::string of(const OffsetRef &r) { return r.valid() ? ref("e", r.index) : "none"; }
  static std::string of(const AllocFlags &f) {
    std::string s;
    if (f.bits & HJ_ALLOC_ZERO_INIT) s += "|zero_init";
    if (f.bits & HJ_ALLOC_RESETS_TO_ZERO) s += "|resets_to_zero";
    if (f.bits & HJ_ALLOC_OUTPUT) s += "|output";
    uint32_t rest = f.bits & ~uint32_t{HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO | HJ_ALLOC_OUTPUT};
    if (rest) s += "|" + std::to_string(rest);
    return s.empty() ? "none" : s.substr(1);
  }
  static std::string of(const ParamKind &k) {
    if ((k.value & 0xff) == HJ_PARAM_TENSOR) return "tensor" + std::to_string(hj_param_rank(k.value));
    return paramName(k.value);
  }
  template <class T>
  static std::string of(const std::vector<T> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + of(v[i]);
    return s + "]";
  }
  template <class T, size_t N>
  static std::string of(const std::array<T, N> &a) {
    return of(std::vector<T>(a.begin(), a.end()));
  }
  template <class... T>
  static std::string of(const std::variant<T...> &v) {
    return std::visit([](const auto &x) { return named(x); }, v);
  }
  template <class T>
    requires HasFields<T>
  static std::string of(const T &record) {
    return "{" + fields(record) + "}";
  }
  // A record's fields: "a=1 b=[e2]".
  template <class T>
  static std::string fields(const T &record) {
    std::string s;
    if constexpr (HasFields<T>)
      record.forEachField([&](const char *name, const auto &field) {
        if constexpr (std::is_same_v<std::decay_t<decltype(field)>, OffsetRef>)
          if (!field.valid()) return;  // no view offset: as before offsets existed
        s += (s.empty() ? "" : " ") + std::string(name) + "=" + of(field);
      });
    return s;
  }

 private:
  // A variant's alternative: records with their kind's name, refs as refs;
  // a collective's or matmul's memory as "in0" or "s2", "+e7" on for a view.
  template <class T>
  static std::string named(const T &x) {
    if constexpr (std::is_same_v<T, InputMemory> || std::is_same_v<T, BufferMemory>) {
      std::string at;
      if constexpr (std::is_same_v<T, InputMemory>) at = of(x.input);
      else at = of(x.slot);
      return x.offset.valid() ? at + "+" + of(x.offset) : at;
    } else if constexpr (HasFields<T>) {
      std::string f = fields(x);
      return std::string(T::kName) + (f.empty() ? "" : "{" + f + "}");
    } else {
      return of(x);
    }
  }
};

std::string exprText(const Plan &plan, size_t i) {
  const Expr &e = plan.exprs[i];
  std::string s;
  switch (e.kind) {
    case Expr::Kind::Const: s = "const " + (isFloat(e.type) ? number(e.f) : std::to_string(e.i)); break;
    case Expr::Kind::InputSize: s = "size in" + std::to_string(e.input) + ", " + std::to_string(e.dim); break;
    case Expr::Kind::InputStride: s = "stride in" + std::to_string(e.input) + ", " + std::to_string(e.dim); break;
    case Expr::Kind::ScalarInput: s = "scalar sc" + std::to_string(e.input); break;
    case Expr::Kind::Op: {
      s = opName(e.op);
      const char *sep = " e";
      forEachOperand(e, [&](ExprId o) {
        s += sep + std::to_string(o.index);
        sep = ", e";
      });
      break;
    }
    case Expr::Kind::LoopIndex: s = "index loop" + std::to_string(e.input); break;
    case Expr::Kind::Rank: s = "rank"; break;
    case Expr::Kind::World: s = "world"; break;
  }
  s += std::string(" : ") + dtypeName(e.type);
  if (plan.exprLoop[i].valid()) s += " in loop" + std::to_string(plan.exprLoop[i].index);
  return s + "  // " + plan.exprNames[i];
}

std::string kernelText(const Kernel &k) {
  std::string s = "@" + k.name + "(";
  for (size_t i = 0; i < k.params.size(); ++i) s += (i ? ", " : "") + toString(k.params[i]);
  s += ")";
  if (k.cuda) s += " cuda=" + quoted(*k.cuda);
  if (k.image) s += " image=" + quoted(*k.image);
  if (k.entry) s += " entry=" + quoted(*k.entry);
  if (k.host) s += " host=" + quoted(*k.host);
  if (k.nvrtcOptions) s += " nvrtc_options=" + quoted(*k.nvrtcOptions);
  if (k.cooperative) s += " cooperative";
  if (k.cluster)
    s += " cluster=(" + std::to_string((*k.cluster)[0]) + ", " + std::to_string((*k.cluster)[1]) + ", " +
         std::to_string((*k.cluster)[2]) + ")";
  if (k.pdl) s += " pdl";
  if (k.boundsChecked) s += " bounds_checked";
  if (k.custom) s += " custom";
  if (k.symbol) s += " symbol=" + quoted(*k.symbol);
  if (k.library) s += " library=" + quoted(*k.library);
  if (k.capturable) s += " capturable";
  return s;
}

// An element of a list field of the plan, after its index.
std::string elementText(const Plan &, const Step &s) {
  std::string f = std::visit([](const auto &x) { return Text::fields(x); }, s);
  return std::string(stepKeyword(s.index())) + (f.empty() ? "" : " " + f);
}
template <class T>
  requires HasFields<T>
std::string elementText(const Plan &, const T &record) {
  return Text::fields(record);
}
template <class T>
std::string elementText(const Plan &, const T &value) {
  return Text::of(value);
}

}  // namespace

std::string printPlan(const Plan &plan) {
  std::string out;
  plan.forEachField([&](const char *name, const auto &field) {
    using T = std::decay_t<decltype(field)>;
    if (!std::strcmp(name, "exprLoop") || !std::strcmp(name, "exprNames")) return;  // printed with exprs
    if constexpr (requires { field.size(); typename T::value_type; } && !std::is_same_v<T, std::string>) {
      out += std::string(name) + ":" + (field.empty() ? " []" : "") + "\n";
      for (size_t i = 0; i < field.size(); ++i) {
        if constexpr (std::is_same_v<typename T::value_type, Expr>)
          out += "  e" + std::to_string(i) + " = " + exprText(plan, i) + "\n";
        else
          out += "  " + std::to_string(i) + ": " + elementText(plan, field[i]) + "\n";
      }
    } else {
      out += std::string(name) + ": " + Text::of(field) + "\n";
    }
  });
  out += std::string("kernels:") + (plan.kernels.empty() ? " []" : "") + "\n";
  for (size_t i = 0; i < plan.kernels.size(); ++i)
    out += "  k" + std::to_string(i) + ": " + kernelText(plan.kernels[i]) + "\n";
  return out;
}

}  // namespace hostjit
