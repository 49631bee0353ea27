// size_expr.cpp - SizeExpr: building, parsing and printing fusion expressions.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hostjit/fusion/fusion.h"
#include "hostjit/text/text.h"

namespace hostjit {

SizeExpr SizeExpr::integer(int64_t v) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Int;
  n->i = v;
  return SizeExpr(std::move(n));
}

SizeExpr SizeExpr::floating(double v) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Float;
  n->f = v;
  return SizeExpr(std::move(n));
}

SizeExpr SizeExpr::scalar(std::string name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Scalar;
  n->name = std::move(name);
  return SizeExpr(std::move(n));
}

SizeExpr SizeExpr::size(std::string tensor, uint32_t dim) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Size;
  n->name = std::move(tensor);
  n->dim = dim;
  return SizeExpr(std::move(n));
}

SizeExpr SizeExpr::stride(std::string tensor, uint32_t dim) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Stride;
  n->name = std::move(tensor);
  n->dim = dim;
  return SizeExpr(std::move(n));
}

SizeExpr SizeExpr::op(OpCode op, std::vector<SizeExpr> operands) {
  if (opClass(op) == OpClass::Query)
    throw ApiMisuse(std::string("SizeExpr::op: '") + opName(op) + "' is written SizeExpr::size or SizeExpr::stride");
  if (operands.size() != opArity(op))
    throw ApiMisuse(std::string("SizeExpr::op: '") + opName(op) + "' takes " + std::to_string(opArity(op)) +
                    " operands, not " + std::to_string(operands.size()));
  for (const SizeExpr &x : operands)
    if (!x.valid()) throw ApiMisuse("SizeExpr::op: an operand is empty");
  auto n = std::make_shared<Node>();
  n->kind = Kind::Op;
  n->op = op;
  n->operands = std::move(operands);
  return SizeExpr(std::move(n));
}

SizeExpr operator+(SizeExpr a, SizeExpr b) { return SizeExpr::binary(OpCode::Add, std::move(a), std::move(b)); }
SizeExpr operator-(SizeExpr a, SizeExpr b) { return SizeExpr::binary(OpCode::Sub, std::move(a), std::move(b)); }
SizeExpr operator*(SizeExpr a, SizeExpr b) { return SizeExpr::binary(OpCode::Mul, std::move(a), std::move(b)); }
SizeExpr ceildiv(SizeExpr a, SizeExpr b) { return SizeExpr::binary(OpCode::CeilDiv, std::move(a), std::move(b)); }

namespace {

const char *infixOf(OpCode op) {
  switch (op) {
    case OpCode::Add: return "+";
    case OpCode::Sub: return "-";
    case OpCode::Mul: return "*";
    case OpCode::Div: return "/";
    case OpCode::Mod: return "%";
    default: return nullptr;
  }
}

int precedence(OpCode op) { return op == OpCode::Add || op == OpCode::Sub ? 1 : 2; }

// Recursive descent over: expr := term (('+'|'-') term)*; term := unary
// (('*'|'/'|'%') unary)*; unary := '-' unary | primary; primary := integer |
// float | name | name '(' args ')' | '(' expr ')'.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Expected<SizeExpr> run() {
    SizeExpr e = expr();
    skip();
    if (error_.empty() && pos_ < s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    if (!error_.empty()) return Error{HJ_ERR_INVALID_ARGUMENT, error_};
    return e;
  }

 private:
  void fail(const std::string &what) {
    if (error_.empty()) error_ = "column " + std::to_string(pos_ + 1) + ": " + what;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'" + (pos_ < s_.size() ? "" : " before the end"));
  }

  SizeExpr expr() {
    SizeExpr e = term();
    while (error_.empty()) {
      if (eat('+')) e = e + term();
      else if (eat('-')) e = e - term();
      else break;
    }
    return e;
  }

  SizeExpr term() {
    SizeExpr e = unary();
    while (error_.empty()) {
      if (eat('*')) e = e * unary();
      else if (eat('/')) e = SizeExpr::binary(OpCode::Div, e, unary());
      else if (eat('%')) e = SizeExpr::binary(OpCode::Mod, e, unary());
      else break;
    }
    return e;
  }

  SizeExpr unary() {
    if (eat('-')) {
      SizeExpr x = unary();
      if (!error_.empty()) return SizeExpr::integer(0);
      if (x.kind() == SizeExpr::Kind::Int && x.intValue() != INT64_MIN) return SizeExpr::integer(-x.intValue());
      if (x.kind() == SizeExpr::Kind::Float) return SizeExpr::floating(-x.floatValue());
      return SizeExpr::integer(0) - x;
    }
    return primary();
  }

  SizeExpr primary() {
    skip();
    SizeExpr bad = SizeExpr::integer(0);
    if (!error_.empty()) return bad;
    if (pos_ >= s_.size()) {
      fail("expected an operand before the end");
      return bad;
    }
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      SizeExpr e = expr();
      expect(')');
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      std::string word(s_.substr(start, pos_ - start));
      skip();
      if (pos_ < s_.size() && s_[pos_] == '(') return call(word, start);
      return SizeExpr::scalar(word);
    }
    fail("expected an operand, got '" + std::string(1, c) + "'");
    return bad;
  }

  SizeExpr number() {
    size_t start = pos_;
    bool isFloat = false;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        isFloat = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
      } else {
        break;
      }
    }
    std::string text(s_.substr(start, pos_ - start));
    char *end = nullptr;
    errno = 0;
    if (isFloat) {
      double v = std::strtod(text.c_str(), &end);
      if (*end) {
        pos_ = start;
        fail("'" + text + "' is not a number");
      }
      return SizeExpr::floating(v);
    }
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == ERANGE) {
      pos_ = start;
      fail("integer " + text + " does not fit i64");
    }
    return SizeExpr::integer(v);
  }

  SizeExpr call(const std::string &fn, size_t start) {
    SizeExpr bad = SizeExpr::integer(0);
    expect('(');
    if (fn == "size" || fn == "stride") {
      skip();
      size_t nameAt = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      std::string tensor(s_.substr(nameAt, pos_ - nameAt));
      if (tensor.empty() || std::isdigit(static_cast<unsigned char>(tensor[0]))) {
        pos_ = nameAt;
        fail("expected a tensor name in " + fn + "(tensor, dim)");
        return bad;
      }
      expect(',');
      skip();
      size_t dimAt = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (dimAt == pos_ || pos_ - dimAt > 2) {
        pos_ = dimAt;
        fail("expected a dimension (0 to 7) in " + fn + "(tensor, dim)");
        return bad;
      }
      uint32_t dim = static_cast<uint32_t>(std::stoul(std::string(s_.substr(dimAt, pos_ - dimAt))));
      expect(')');
      return fn == "size" ? SizeExpr::size(tensor, dim) : SizeExpr::stride(tensor, dim);
    }
    auto op = parseOp(fn);
    if (!op) {
      pos_ = start;
      fail("unknown function '" + fn + "' (expected size, stride or a Host IR scalar operation: add, ceildiv, min, "
           "to_i32, select, ...)");
      return bad;
    }
    std::vector<SizeExpr> args{expr()};
    for (unsigned k = 1; k < opArity(*op) && error_.empty(); ++k) {
      expect(',');
      args.push_back(expr());
    }
    expect(')');
    if (!error_.empty()) return bad;
    return SizeExpr::op(*op, std::move(args));
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

std::string print(const SizeExpr &e, int outer) {
  switch (e.kind()) {
    case SizeExpr::Kind::Int: {
      std::string s = std::to_string(e.intValue());
      return e.intValue() < 0 && outer > 0 ? "(" + s + ")" : s;
    }
    case SizeExpr::Kind::Float: {
      std::string s = floatLiteralText(e.floatValue());
      return e.floatValue() < 0 && outer > 0 ? "(" + s + ")" : s;
    }
    case SizeExpr::Kind::Scalar: return e.name();
    case SizeExpr::Kind::Size: return "size(" + e.name() + ", " + std::to_string(e.dim()) + ")";
    case SizeExpr::Kind::Stride: return "stride(" + e.name() + ", " + std::to_string(e.dim()) + ")";
    case SizeExpr::Kind::Op: {
      const char *infix = infixOf(e.op());
      const std::vector<SizeExpr> &x = e.operands();
      if (!infix) {
        std::string s = std::string(opName(e.op())) + "(";
        for (size_t k = 0; k < x.size(); ++k) s += (k ? ", " : "") + print(x[k], 0);
        return s + ")";
      }
      int p = precedence(e.op());
      // Left-associative: the right operand needs parentheses at equal precedence.
      std::string s = print(x[0], p) + " " + infix + " " + print(x[1], p + 1);
      return p < outer ? "(" + s + ")" : s;
    }
  }
  return "?";
}

}  // namespace

Expected<SizeExpr> SizeExpr::parse(std::string_view text) { return Parser(text).run(); }

std::string SizeExpr::str() const { return valid() ? print(*this, 0) : "<empty>"; }

}  // namespace hostjit
