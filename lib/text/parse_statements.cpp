// parse_statements.cpp - the function body: statements with their comments,
// operands, loops, blocks on streams and collectives.
#include <set>

#include "parser_impl.h"

namespace hostjit::text_detail {

void Parser::parseStmtWithComments() {
  size_t before = b_.program().body.size();
  const Token &first = peek();
  std::vector<std::string> leading = first.leadingComments;
  uint32_t line = first.loc.line;
  try {
    parseStmt();
  } catch (Failed) {
    skipLine(line);
    // The values this line would have defined: their uses say nothing more.
    for (const auto &[name, at] : later_)
      if (at.line == line && !names_.count(name)) broken_.insert(name);
  }
  auto &body = b_.program().body;
  if (body.size() > before) {
    // A block: its For or On, which took the comment after its '{'.
    StmtKind kind = body[before].kind();
    Comments &c = c_.stmt(before);
    c.leading = std::move(leading);
    if (kind != StmtKind::For && kind != StmtKind::On) c.trailing = t_[pos_ - 1].trailingComment;
  }
}

void Parser::parseFor(const Token &kw, const std::vector<const Token *> &results) {
  if (peek().kind != Tok::Percent) fail("a loop variable '%name'");
  const Token &name = next();
  expectPunct("=");
  Operand lo = parseOperand();
  if (!isIdent("to")) fail("'to'");
  next();
  Operand hi = parseOperand();
  std::vector<ProgramBuilder::LoopCarry> carry;
  std::vector<const Token *> carried;
  if (isIdent("iter")) {
    next();
    expectPunct("(");
    while (true) {
      if (peek().kind != Tok::Percent) fail("a carried buffer '%name'");
      carried.push_back(&next());
      expectPunct("=");
      carry.push_back({carried.back()->text, parseOperand(), "", carried.back()->loc, {}});
      if (!isPunct(",")) break;
      next();
    }
    expectPunct(")");
  }
  if (!isPunct("{")) fail(carry.empty() ? "'iter(...)' or '{'" : "'{'");
  Loc at = results.empty() ? kw.loc : results.front()->loc;
  if (results.size() != carry.size())
    error(at, "the loop hands out " + std::to_string(results.size()) + (results.size() == 1 ? " result" : " results") +
                  " but its iter(...) carries " + std::to_string(carry.size()) +
                  (carry.size() == 1 ? " buffer" : " buffers") + ": name one result per carried buffer");
  for (size_t k = 0; k < results.size(); ++k) {  // a mismatch is reported: pair what there is
    if (k == carry.size()) carry.push_back({"", Operand::integer(0, results[k]->loc), "", results[k]->loc, {}});
    carry[k].result = results[k]->text;
    carry[k].resultLoc = results[k]->loc;
  }
  enterBlock(kw);
  size_t index = b_.program().body.size();
  ProgramBuilder::ForValues loop = b_.forBegin(name.text, lo, hi, carry, at);
  define(name, loop.index);
  for (size_t k = 0; k < carried.size(); ++k) define(*carried[k], loop.carried[k]);
  parseBlock(kw, index, "loop", [&](Loc l) { b_.forEnd(l); });
  for (size_t k = 0; k < results.size(); ++k) define(*results[k], loop.results[k]);
}

void Parser::parseCollective(Collective::Kind kind, Loc loc) {
  using K = Collective::Kind;
  Collective c;
  c.kind = kind;
  c.src = c.dst = c.peer = Operand::integer(0, loc);
  if (kind == K::AllReduce || kind == K::ReduceScatter) {
    static const char *ops[] = {"sum", "prod", "max", "min"};
    const Token &opTok = peek();
    std::string op = expectIdent("a reduction (sum, prod, max or min)");
    auto it = std::find(std::begin(ops), std::end(ops), op);
    if (it == std::end(ops)) {
      error(opTok.loc, "unknown reduction '" + op + "'; expected sum, prod, max or min");
      throw Failed{};
    }
    c.op = static_cast<uint32_t>(it - std::begin(ops));
  }
  if (kind == K::Recv) {
    c.dst = parseOperand();
  } else {
    c.src = parseOperand();
  }
  expectPunct(",");
  if (kind == K::Send || kind == K::Recv) {
    c.peer = parseOperand();
  } else {
    c.dst = parseOperand();
    if (kind == K::Broadcast) {
      expectPunct(",");
      c.peer = parseOperand();
    }
  }
  b_.collective(c, loc);
}

void Parser::parseMatmul(Loc loc) {
  Matmul m;
  m.bias = m.workspace = Operand::integer(0, loc);
  m.a = parseOperand();
  expectPunct(",");
  m.b = parseOperand();
  expectPunct(",");
  m.c = parseOperand();
  std::set<std::string> seen;
  // Options, on the statement's line, in any order.
  while (peek().kind == Tok::Ident && peek().loc.line == loc.line) {
    const Token &t = peek();
    std::string key = t.text;
    if (key != "transpose_a" && key != "transpose_b" && key != "alpha" && key != "beta" && key != "bias" &&
        key != "workspace") {
      error(t.loc, "unknown matmul option '" + key + "'; expected transpose_a, transpose_b, alpha, beta, bias or workspace");
      throw Failed{};
    }
    next();
    if (!seen.insert(key).second) error(t.loc, "matmul option '" + key + "' given twice");
    if (key == "transpose_a") m.transposeA = true;
    else if (key == "transpose_b") m.transposeB = true;
    else if (key == "bias") m.bias = parseOperand();
    else if (key == "workspace") m.workspace = parseOperand();
    else {
      Operand v = parseOperand();
      if (v.isValue()) {
        error(v.loc, "matmul's " + key + " must be a number literal");
        throw Failed{};
      }
      (key == "alpha" ? m.alpha : m.beta) = v.kind == Operand::Kind::Float ? v.f : static_cast<double>(v.i);
    }
  }
  b_.matmul(std::move(m), loc);
}

void Parser::parseOn(const Token &kw) {
  Operand stream = parseOperand();
  if (!isPunct("{")) fail("'{'");
  enterBlock(kw);
  size_t index = b_.program().body.size();
  b_.onBegin(stream, kw.loc);
  parseBlock(kw, index, "'on' block", [&](Loc l) { b_.onEnd(l); });
}

void Parser::enterBlock(const Token &kw) {
  if (blockDepth_ == kMaxBlockDepth) {  // the parser recurses per level
    if (!tooDeep_) error(kw.loc, "blocks ('for', 'on') nested more than " + std::to_string(kMaxBlockDepth) + " deep");
    tooDeep_ = true;  // said once
    throw Failed{};
  }
}

template <class Close>
void Parser::parseBlock(const Token &kw, size_t index, const char *what, Close close) {
  c_.stmt(index).trailing = next().trailingComment;  // the '{'
  ++blockDepth_;
  struct Leave {
    int &depth;
    ~Leave() { --depth; }
  } leave{blockDepth_};
  while (!isPunct("}")) {
    if (peek().kind == Tok::End) {
      error(peek().loc, std::string("expected '}' to close the ") + what + " at line " + std::to_string(kw.loc.line));
      close(peek().loc);
      return;
    }
    parseStmtWithComments();
  }
  std::vector<std::string> leading = peek().leadingComments;
  const Token &closing = next();
  close(closing.loc);
  Comments &end = c_.stmt(b_.program().body.size() - 1);
  end.leading = std::move(leading);
  end.trailing = closing.trailingComment;
}

Operand Parser::parseOperand() {
  const Token &t = peek();
  if (t.kind == Tok::Int) return Operand::integer(next().i, t.loc);
  if (t.kind == Tok::Float) return Operand::floating(next().f, t.loc);
  if (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan")) {
    next();
    return Operand::floating(t.text == "inf" ? HUGE_VAL : std::nan(""), t.loc);
  }
  if (t.kind == Tok::Punct && t.text == "-" ) fail("an operand");
  if (t.kind != Tok::Percent) fail("an operand (a %value or a literal)");
  next();
  if (auto it = names_.find(t.text); it != names_.end()) return Operand::of(it->second, t.loc);
  if (broken_.count(t.text)) return Operand::integer(0, t.loc);  // its line's error was reported
  if (auto it = later_.find(t.text); it != later_.end())
    error(t.loc, "use of %" + t.text + " before its definition at line " + std::to_string(it->second.line));
  else
    error(t.loc, "use of undefined value %" + t.text);
  return Operand::integer(0, t.loc);
}

std::vector<Operand> Parser::parseOperandList(const char *close) {
  std::vector<Operand> ops;
  if (isPunct(close)) return ops;
  while (true) {
    ops.push_back(parseOperand());
    if (!isPunct(",")) break;
    next();
  }
  return ops;
}

std::array<Operand, 3> Parser::parseTriple(const char *kw) {
  if (!isIdent(kw)) fail(std::string("'") + kw + "(x, y, z)'");
  next();
  expectPunct("(");
  Operand x = parseOperand();
  expectPunct(",");
  Operand y = parseOperand();
  expectPunct(",");
  Operand z = parseOperand();
  expectPunct(")");
  return {x, y, z};
}

void Parser::define(const Token &name, ValueId id) {
  // The first definition keeps the name; the verifier reports the second.
  names_.emplace(name.text, id);
}

void Parser::parseStmt() {
  const Token &first = peek();
  if (first.kind == Tok::Percent) {
    const Token &name = next();
    std::vector<const Token *> results{&name};
    while (isPunct(",")) {  // only a loop defines several values
      next();
      if (peek().kind != Tok::Percent) fail("a result '%name'");
      results.push_back(&next());
    }
    expectPunct("=");
    if (results.size() > 1 && !isIdent("for")) fail("'for' (only a loop defines several values)");
    if (isIdent("for")) {
      parseFor(next(), results);
      return;
    }
    const Token &opTok = peek();
    std::string word = expectIdent("an operation (size, stride, add, ..., alloc, view, for, stream, record)");
    if (word == "stream" || word == "record") {
      define(name, word == "stream" ? b_.stream(name.text, name.loc) : b_.record(name.text, name.loc));
      return;
    }
    if (word == "rank" || word == "world") {
      define(name, b_.commQuery(name.text, word == "world", name.loc));
      return;
    }
    if (word == "alloc") {
      DType d = parseDTypeTok(false);
      expectPunct("[");
      auto extents = parseOperandList("]");
      expectPunct("]");
      std::vector<Operand> strides;
      bool zi = false, rtz = false;
      if (isIdent("strides")) {
        next();
        expectPunct("[");
        strides = parseOperandList("]");
        expectPunct("]");
      }
      while (peek().kind == Tok::Ident && peek().loc.line == name.loc.line) {
        const Token &f = next();
        if (f.text == "zero_init") zi = true;
        else if (f.text == "resets_to_zero") rtz = true;
        else error(f.loc, "unknown alloc flag '" + f.text + "'; expected zero_init or resets_to_zero");
      }
      define(name, b_.alloc(name.text, d, std::move(extents), std::move(strides), zi, rtz, name.loc));
      return;
    }
    if (word == "view") {
      Operand base = parseOperand();
      expectPunct("[");
      auto extents = parseOperandList("]");
      expectPunct("]");
      std::vector<Operand> strides;
      if (isIdent("strides") && peek().loc.line == name.loc.line) {
        next();
        expectPunct("[");
        strides = parseOperandList("]");
        expectPunct("]");
      }
      Operand offset = Operand::integer(0);
      if (isIdent("offset") && peek().loc.line == name.loc.line) {
        next();
        offset = parseOperand();
      }
      define(name, b_.view(name.text, base, std::move(extents), std::move(strides), name.loc, offset));
      return;
    }
    auto op = parseOp(word);
    if (!op) {
      error(opTok.loc, "unknown operation '" + word + "'");
      throw Failed{};
    }
    if (peek().loc.line != opTok.loc.line) {
      error(Loc{opTok.loc.line, opTok.loc.col + static_cast<uint32_t>(word.size())},
            "expected an operand after '" + word + "'");
      throw Failed{};
    }
    Operand a = parseOperand();
    if (opArity(*op) == 1) {
      define(name, b_.unary(name.text, *op, a, name.loc));
      return;
    }
    expectPunct(",");
    Operand b = parseOperand();
    if (opArity(*op) == 3) {
      expectPunct(",");
      Operand c = parseOperand();
      define(name, b_.select(name.text, a, b, c, name.loc));
      return;
    }
    define(name, b_.op(name.text, *op, a, b, name.loc));
    return;
  }
  if (isIdent("for")) {
    parseFor(next(), {});
    return;
  }
  if (isIdent("yield")) {
    next();
    std::vector<Operand> vals;
    if (peek().loc.line == first.loc.line && !isPunct("}")) vals = parseOperandList("}");
    b_.yield(std::move(vals), first.loc);
    return;
  }
  if (isIdent("on")) {
    parseOn(next());
    return;
  }
  if (isIdent("wait")) {
    next();
    b_.wait(parseOperand(), first.loc);
    return;
  }
  for (int k = 0; k < 6; ++k) {
    auto kind = static_cast<Collective::Kind>(k);
    if (!isIdent(collectiveKeyword(kind))) continue;
    next();
    parseCollective(kind, first.loc);
    return;
  }
  if (isIdent("sync")) {
    next();
    b_.sync(first.loc);
    return;
  }
  if (isIdent("matmul")) {
    next();
    parseMatmul(first.loc);
    return;
  }
  if (isIdent("free")) {
    next();
    b_.free(parseOperand(), first.loc);
    return;
  }
  if (isIdent("return")) {
    next();
    std::vector<Operand> vals;
    if (peek().loc.line == first.loc.line && !isPunct("}")) vals = parseOperandList("}");
    b_.ret(std::move(vals), first.loc);
    return;
  }
  if (isIdent("call")) {
    next();
    if (peek().kind != Tok::At) fail("a custom call '@name'");
    const Token &ct = next();
    auto cid = b_.program().findKernel(ct.text);
    if (!cid) {
      error(ct.loc, "call of undeclared custom call @" + ct.text);
      throw Failed{};
    }
    expectPunct("(");
    auto args = parseOperandList(")");
    expectPunct(")");
    b_.call(*cid, std::move(args), first.loc);
    return;
  }
  if (isIdent("launch")) {
    next();
    if (peek().kind != Tok::At) fail("a kernel '@name'");
    const Token &kt = next();
    auto kid = b_.program().findKernel(kt.text);
    if (!kid) {
      error(kt.loc, "launch of undeclared kernel @" + kt.text);
      throw Failed{};
    }
    auto grid = parseTriple("grid");
    auto block = parseTriple("block");
    if (!isIdent("smem")) fail("'smem(bytes)'");
    next();
    expectPunct("(");
    Operand smem = parseOperand();
    expectPunct(")");
    expectPunct("(");
    auto args = parseOperandList(")");
    expectPunct(")");
    b_.launch(*kid, grid, block, smem, std::move(args), first.loc);
    return;
  }
  fail("a statement (%name = ..., free, launch, matmul, call, for, yield, on, wait, sync, a collective or return)");
}

}  // namespace hostjit::text_detail
