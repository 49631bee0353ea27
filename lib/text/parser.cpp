// parser.cpp - parses .hir text into a Program: the token stream, types,
// kernel declarations and the function's signature, and parse()/parseFile().
#include <set>
#include <string_view>

#include "parser_impl.h"
#include "hostjit/ir/files.h"

namespace hostjit::text_detail {

std::string Parser::attrText(std::optional<std::string> &slot, const std::string &) {
  if (peek().kind != Tok::String) fail("a string");
  const Token &val = next();
  slot = val.text;
  return val.trailingComment;
}

std::string Parser::attrFlag(bool &flag, const std::string &) {
  if (!isIdent("true") && !isIdent("false")) fail("true or false");
  const Token &val = next();
  flag = val.text == "true";
  return val.trailingComment;
}

std::string Parser::attrDims(std::optional<std::array<int64_t, 3>> &dims, const std::string &key) {
  expectPunct("(");
  std::array<int64_t, 3> d{};
  for (int i = 0; i < 3; ++i) {
    if (i) expectPunct(",");
    if (peek().kind != Tok::Int) fail("a " + key + " dim (an integer)");
    d[i] = next().i;
  }
  if (!isPunct(")")) fail("')'");
  dims = d;
  return next().trailingComment;
}

Program Parser::run(std::vector<std::string> tail) {
  // Kernels first (in order), then the one function, so launches can name
  // kernels declared anywhere in the file.
  std::vector<size_t> funcs;
  while (peek().kind != Tok::End) {
    if (isIdent("kernel") || isIdent("custom")) {
      parseKernel();
    } else if (isIdent("func")) {
      funcs.push_back(pos_);
      skipBraced();
    } else {
      error(peek().loc, "expected 'kernel', 'custom' or 'func', found " + describe(peek()));
      skipToTopLevel();
    }
  }
  if (funcs.empty()) {
    error(peek().loc, "expected a function: func @main(...) -> (...) { ... }");
  } else {
    for (size_t k = 1; k < funcs.size(); ++k) error(t_[funcs[k]].loc, "only one function per program is supported");
    pos_ = funcs[0];
    parseFunc();
  }
  c_.trailing = std::move(tail);
  return b_.finish();
}

const Token &Parser::next() {
  const Token &t = t_[pos_];
  if (pos_ + 1 < t_.size()) ++pos_;
  return t;
}

std::string Parser::describe(const Token &t) {
  switch (t.kind) {
    case Tok::End: return "end of file";
    case Tok::Percent: return "'%" + t.text + "'";
    case Tok::At: return "'@" + t.text + "'";
    case Tok::String: return "a string";
    default: return "'" + t.text + "'";
  }
}

[[noreturn]] void Parser::fail(const std::string &what) {
  error(peek().loc, "expected " + what + ", found " + describe(peek()));
  throw Failed{};
}

void Parser::expectPunct(const char *p) {
  if (!isPunct(p)) fail(std::string("'") + p + "'");
  next();
}

std::string Parser::expectIdent(const char *what) {
  if (peek().kind != Tok::Ident) fail(what);
  return next().text;
}

void Parser::skipBraced() {
  int depth = 0;
  while (peek().kind != Tok::End) {
    const Token &t = next();
    if (t.kind == Tok::Punct && t.text == "{") ++depth;
    if (t.kind == Tok::Punct && t.text == "}" && --depth <= 0) return;
  }
}

void Parser::skipToTopLevel() {
  while (peek().kind != Tok::End && !isIdent("kernel") && !isIdent("custom") && !isIdent("func")) next();
}

void Parser::skipLine(uint32_t line) {
  while (peek().kind != Tok::End && peek().loc.line == line && !isPunct("}")) next();
}

DType Parser::parseDTypeTok(bool scalarOnly) {
  const Token &t = peek();
  auto d = t.kind == Tok::Ident ? parseDType(t.text) : std::nullopt;
  if (!d) fail(scalarOnly ? "a scalar type (i64, i32, f32, f64, bool)" : "an element type");
  if (scalarOnly && !isScalarType(*d)) {
    error(t.loc, "'" + t.text + "' is not a scalar type; expected i64, i32, f32, f64 or bool");
  }
  next();
  return *d;
}

std::vector<int64_t> Parser::parseDims() {
  expectPunct("[");
  std::vector<int64_t> dims;
  if (!isPunct("]")) {
    while (true) {
      if (isPunct("?")) {
        next();
        dims.push_back(kDynamic);
      } else if (peek().kind == Tok::Int) {
        if (peek().i < 0) error(peek().loc, "a static dim must be >= 0");
        dims.push_back(next().i);
      } else {
        fail("a dim (an integer or '?')");
      }
      if (!isPunct(",")) break;
      next();
    }
  }
  expectPunct("]");
  return dims;
}

void Parser::parseKernel() {
  const Token &kw = next();
  const bool custom = kw.text == "custom";
  const char *noun = custom ? "custom call" : "kernel";
  Comments comments;
  comments.leading = kw.leadingComments;
  try {
    if (peek().kind != Tok::At) fail(std::string("a ") + noun + " name '@name'");
    Loc loc = peek().loc;
    std::string name = next().text;
    if (b_.program().findKernel(name)) error(loc, std::string("redefinition of ") + noun + " @" + name);
    expectPunct("(");
    std::vector<ParamType> params;
    if (!isPunct(")")) {
      while (true) {
        if (isIdent("ptr")) {
          next();
          expectPunct("<");
          DType d = parseDTypeTok(false);
          expectPunct(">");
          params.push_back({true, d});
        } else if (isIdent("tensor")) {
          next();
          expectPunct("<");
          DType d = parseDTypeTok(false);
          expectPunct(",");
          if (peek().kind != Tok::Int) fail("a rank (0 to 8)");
          const Token &r = next();
          if (r.i < 0 || r.i > static_cast<int64_t>(kMaxRank)) error(r.loc, "a tensor rank must be 0 to 8");
          expectPunct(">");
          ParamType pt;
          pt.dtype = d;
          pt.isStruct = true;
          pt.rank = static_cast<uint32_t>(std::clamp<int64_t>(r.i, 0, kMaxRank));
          params.push_back(pt);
        } else {
          params.push_back({false, parseDTypeTok(true)});
        }
        if (!isPunct(",")) break;
        next();
      }
    }
    expectPunct(")");
    if (!isPunct("{")) fail("'{'");
    comments.trailing = next().trailingComment;
    KernelId id = b_.kernel(name, params, std::nullopt, std::nullopt, std::nullopt, kw.loc);
    Kernel &k = b_.program().kernels[id.index];
    k.custom = custom;
    if (c_.kernels.size() <= id.index) c_.kernels.resize(id.index + 1);
    KernelComments &kc = c_.kernels[id.index];
    kc.decl = comments;
    std::set<std::string> seen;  // each attribute at most once
    std::string list = kernelAttributeList(custom);
    while (!isPunct("}")) {
      if (peek().kind == Tok::End) fail("'}'");
      const Token &at = peek();
      Comments ac;
      ac.leading = at.leadingComments;
      std::string key = expectIdent(("an attribute (" + list + ")").c_str());
      expectPunct("=");
      bool known = false;
#define HOSTJIT_KERNEL_ATTR(name, member, kind, owner, example)                        \
  if (!known && key == name && (std::string_view(#owner) == "Custom") == custom) {    \
    known = true;                                                                       \
    if (!seen.insert(key).second) error(at.loc, "attribute '" + key + "' given twice"); \
    ac.trailing = attr##kind(k.member, key);                                            \
    kc.member = ac;                                                                     \
  }
#include "hostjit/ir/kernel_attrs.def"
#undef HOSTJIT_KERNEL_ATTR
      if (key == "cluster") k.clusterLoc = at.loc;
      if (key == "block") k.blockLoc = at.loc;
      if (!known) {
        if (peek().kind != Tok::String) fail("a string");
        next();
        error(at.loc, std::string(custom ? "unknown custom call attribute '" : "unknown kernel attribute '") + key +
                          "'; expected " + list);
      }
    }
    kc.closing.leading = peek().leadingComments;
    kc.closing.trailing = next().trailingComment;
  } catch (Failed) {
    skipToTopLevel();
  }
}

void Parser::prescanDefinitions(size_t from) {
  int depth = 0;
  for (size_t k = from; k < t_.size(); ++k) {
    const Token &t = t_[k];
    if (t.kind == Tok::Punct && t.text == "{") ++depth;
    if (t.kind == Tok::Punct && t.text == "}" && --depth <= 0) return;
    if (t.kind != Tok::Percent) continue;
    // `%a, %b = for ...` at the start of a line defines each name.
    size_t last = k;
    bool startsLine = k == 0 || t_[k - 1].loc.line != t.loc.line;
    while (startsLine && last + 2 < t_.size() && isPunctAt(last + 1, ",") && t_[last + 2].kind == Tok::Percent)
      last += 2;
    if (!isPunctAt(last + 1, "=")) last = k;
    if (isPunctAt(last + 1, "="))
      for (size_t m = k; m <= last; m += 2) later_.emplace(t_[m].text, t_[m].loc);
  }
}

bool Parser::isPunctAt(size_t k, const char *p) const {
  return k < t_.size() && t_[k].kind == Tok::Punct && t_[k].text == p;
}

void Parser::parseFunc() {
  const Token &kw = next();
  Program &p = b_.program();
  c_.func.leading = kw.leadingComments;
  p.funcLoc = kw.loc;
  try {
    if (peek().kind != Tok::At) fail("a function name '@name'");
    p.funcName = next().text;
    expectPunct("(");
    if (!isPunct(")")) {
      while (true) {
        if (peek().kind != Tok::Percent) fail("a parameter '%name'");
        const Token &nt = next();
        expectPunct(":");
        if (auto first = names_.find(nt.text); first != names_.end()) {
          Loc at = p.value(first->second).loc;  // as the verifier says it of statements
          error(nt.loc, "redefinition of %" + nt.text + " (first defined at line " + std::to_string(at.line) + ":" +
                            std::to_string(at.col) + ")");
        }
        ValueId id;
        if (peek().kind == Tok::Ident && peek(1).kind == Tok::Punct && peek(1).text == "[") {
          DType d = parseDTypeTok(false);
          auto dims = parseDims();
          if (dims.size() > kMaxRank) error(nt.loc, "rank " + std::to_string(dims.size()) + " is above the limit of 8");
          bool written = isIdent("written");
          if (written) next();
          id = b_.tensorInput(nt.text, d, dims, nt.loc, written);
        } else {
          id = b_.scalarInput(nt.text, parseDTypeTok(true), nt.loc);
        }
        names_.emplace(nt.text, id);
        if (!isPunct(",")) break;
        next();
      }
    }
    expectPunct(")");
    expectPunct("->");
    expectPunct("(");
    if (!isPunct(")")) {
      while (true) {
        DType d = parseDTypeTok(false);
        p.results.push_back({d, parseDims()});
        if (!isPunct(",")) break;
        next();
      }
    }
    expectPunct(")");
    if (!isPunct("{")) fail("'{'");
    c_.func.trailing = next().trailingComment;
  } catch (Failed) {
    return;
  }
  prescanDefinitions(pos_ - 1);
  while (!isPunct("}")) {
    if (peek().kind == Tok::End) {
      error(peek().loc, "expected '}' to close function @" + p.funcName);
      return;
    }
    parseStmtWithComments();
  }
  c_.funcClosing.leading = peek().leadingComments;
  c_.funcClosing.trailing = next().trailingComment;
}

}  // namespace hostjit::text_detail

namespace hostjit {

using text_detail::Parser;

Program parse(std::string_view text, std::string filename, Diagnostics &diags, ProgramComments *comments) {
  std::vector<std::string> tail;
  auto toks = lex(text, diags, tail);
  ProgramComments dropped;
  Parser parser(std::move(toks), diags, comments ? *comments : dropped);
  Program p = parser.run(std::move(tail));
  p.filename = std::move(filename);
  p.source = std::make_shared<const std::string>(text);
  diags.sort();
  return p;
}

Program parseFile(const std::string &path, Diagnostics &diags, ProgramComments *comments) {
  auto text = readFileBytes(path, kMaxTextFileBytes);
  if (!text) {
    diags.error({}, text.error().message);
    Program p;
    p.filename = path;
    return p;
  }
  return parse(*text, path, diags, comments);
}

}  // namespace hostjit
