// parser.cpp - parses .hir text into a Program through the ProgramBuilder.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "hostjit/text/text.h"
#include "lexer.h"

namespace hostjit {

namespace {

class Parser {
 public:
  Parser(std::vector<Token> toks, Diagnostics &d, ProgramComments &c) : t_(std::move(toks)), d_(d), c_(c) {}

  Program run(std::vector<std::string> tail) {
    // Kernels first (in order), then the one function, so launches can name
    // kernels declared anywhere in the file.
    std::vector<size_t> funcs;
    while (peek().kind != Tok::End) {
      if (isIdent("kernel")) {
        parseKernel();
      } else if (isIdent("func")) {
        funcs.push_back(pos_);
        skipBraced();
      } else {
        error(peek().loc, "expected 'kernel' or 'func', found " + describe(peek()));
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

 private:
  struct Failed {};

  const Token &peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  const Token &next() {
    const Token &t = t_[pos_];
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool isIdent(const char *s) const { return peek().kind == Tok::Ident && peek().text == s; }
  bool isPunct(const char *s) const { return peek().kind == Tok::Punct && peek().text == s; }
  static std::string describe(const Token &t) {
    switch (t.kind) {
      case Tok::End: return "end of file";
      case Tok::Percent: return "'%" + t.text + "'";
      case Tok::At: return "'@" + t.text + "'";
      case Tok::String: return "a string";
      default: return "'" + t.text + "'";
    }
  }
  void error(Loc loc, std::string msg) { d_.error(loc, std::move(msg)); }
  [[noreturn]] void fail(const std::string &what) {
    error(peek().loc, "expected " + what + ", found " + describe(peek()));
    throw Failed{};
  }
  void expectPunct(const char *p) {
    if (!isPunct(p)) fail(std::string("'") + p + "'");
    next();
  }
  std::string expectIdent(const char *what) {
    if (peek().kind != Tok::Ident) fail(what);
    return next().text;
  }
  void skipBraced() {
    int depth = 0;
    while (peek().kind != Tok::End) {
      const Token &t = next();
      if (t.kind == Tok::Punct && t.text == "{") ++depth;
      if (t.kind == Tok::Punct && t.text == "}" && --depth <= 0) return;
    }
  }
  void skipToTopLevel() {
    while (peek().kind != Tok::End && !isIdent("kernel") && !isIdent("func")) next();
  }
  void skipLine(uint32_t line) {
    while (peek().kind != Tok::End && peek().loc.line == line && !isPunct("}")) next();
  }

  DType parseDTypeTok(bool scalarOnly) {
    const Token &t = peek();
    auto d = t.kind == Tok::Ident ? parseDType(t.text) : std::nullopt;
    if (!d) fail(scalarOnly ? "a scalar type (i64, i32, f32, f64, bool)" : "an element type");
    if (scalarOnly && !isScalarType(*d)) {
      error(t.loc, "'" + t.text + "' is not a scalar type; expected i64, i32, f32, f64 or bool");
    }
    next();
    return *d;
  }

  std::vector<int64_t> parseDims() {
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

  void parseKernel() {
    const Token &kw = next();
    Comments comments;
    comments.leading = kw.leadingComments;
    try {
      if (peek().kind != Tok::At) fail("a kernel name '@name'");
      Loc loc = peek().loc;
      std::string name = next().text;
      if (b_.program().findKernel(name)) error(loc, "redefinition of kernel @" + name);
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
      if (c_.kernels.size() <= id.index) c_.kernels.resize(id.index + 1);
      KernelComments &kc = c_.kernels[id.index];
      kc.decl = comments;
      while (!isPunct("}")) {
        if (peek().kind == Tok::End) fail("'}'");
        const Token &at = peek();
        Comments ac;
        ac.leading = at.leadingComments;
        std::string key = expectIdent("an attribute (cuda, entry, host, image or nvrtc_options)");
        expectPunct("=");
        if (peek().kind != Tok::String) fail("a string");
        const Token &val = next();
        ac.trailing = val.trailingComment;
        std::optional<std::string> *slot = nullptr;
        Comments *cslot = nullptr;
        if (key == "cuda") slot = &k.cuda, cslot = &kc.cuda;
        else if (key == "entry") slot = &k.entry, cslot = &kc.entry;
        else if (key == "host") slot = &k.host, cslot = &kc.host;
        else if (key == "image") slot = &k.image, cslot = &kc.image;
        else if (key == "nvrtc_options") slot = &k.nvrtcOptions, cslot = &kc.nvrtcOptions;
        if (!slot) {
          error(at.loc, "unknown kernel attribute '" + key + "'; expected cuda, entry, host, image or nvrtc_options");
          continue;
        }
        if (*slot) error(at.loc, "attribute '" + key + "' given twice");
        *slot = val.text;
        *cslot = ac;
      }
      kc.closing.leading = peek().leadingComments;
      kc.closing.trailing = next().trailingComment;
    } catch (Failed) {
      skipToTopLevel();
    }
  }

  // Collects every `%name =` of the function body, so a use before the
  // definition can be told apart from an undefined name.
  void prescanDefinitions(size_t from) {
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
  bool isPunctAt(size_t k, const char *p) const {
    return k < t_.size() && t_[k].kind == Tok::Punct && t_[k].text == p;
  }

  void parseFunc() {
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
          if (names_.count(nt.text)) error(nt.loc, "redefinition of %" + nt.text);
          ValueId id;
          if (peek().kind == Tok::Ident && peek(1).kind == Tok::Punct && peek(1).text == "[") {
            DType d = parseDTypeTok(false);
            auto dims = parseDims();
            if (dims.size() > kMaxRank) error(nt.loc, "rank " + std::to_string(dims.size()) + " is above the limit of 8");
            id = b_.tensorInput(nt.text, d, dims, nt.loc);
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

  // One statement and the comments above and after it; a statement that
  // does not parse is skipped to the end of its line.
  void parseStmtWithComments() {
    size_t before = b_.program().body.size();
    const Token &first = peek();
    std::vector<std::string> leading = first.leadingComments;
    uint32_t line = first.loc.line;
    try {
      parseStmt();
    } catch (Failed) {
      skipLine(line);
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

  // `%r, ... = for %i = lo to hi iter(%c = %init, ...) { ... }`, after the
  // 'for'; `results` are the names before the '=' (none for a plain loop).
  void parseFor(const Token &kw, const std::vector<const Token *> &results) {
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

  // The operands of a collective, after its keyword.
  void parseCollective(Collective::Kind kind, Loc loc) {
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

  // `on %s { ... }`, after the 'on'.
  void parseOn(const Token &kw) {
    Operand stream = parseOperand();
    if (!isPunct("{")) fail("'{'");
    enterBlock(kw);
    size_t index = b_.program().body.size();
    b_.onBegin(stream, kw.loc);
    parseBlock(kw, index, "'on' block", [&](Loc l) { b_.onEnd(l); });
  }

  void enterBlock(const Token &kw) {
    if (blockDepth_ == kMaxBlockDepth) {  // the parser recurses per level
      if (!tooDeep_) error(kw.loc, "blocks ('for', 'on') nested more than " + std::to_string(kMaxBlockDepth) + " deep");
      tooDeep_ = true;  // said once
      throw Failed{};
    }
  }

  // From the '{' of the block whose first statement is body[index] to its
  // '}', which `close` adds.
  template <class Close>
  void parseBlock(const Token &kw, size_t index, const char *what, Close close) {
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

  Operand parseOperand() {
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
    if (auto it = later_.find(t.text); it != later_.end())
      error(t.loc, "use of %" + t.text + " before its definition at line " + std::to_string(it->second.line));
    else
      error(t.loc, "use of undefined value %" + t.text);
    return Operand::integer(0, t.loc);
  }

  std::vector<Operand> parseOperandList(const char *close) {
    std::vector<Operand> ops;
    if (isPunct(close)) return ops;
    while (true) {
      ops.push_back(parseOperand());
      if (!isPunct(",")) break;
      next();
    }
    return ops;
  }

  std::array<Operand, 3> parseTriple(const char *kw) {
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

  void define(const Token &name, ValueId id) {
    // The first definition keeps the name; the verifier reports the second.
    names_.emplace(name.text, id);
  }

  void parseStmt() {
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
        define(name, b_.view(name.text, base, std::move(extents), std::move(strides), name.loc));
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
    fail("a statement (%name = ..., free, launch, for, yield, on, wait, sync, a collective or return)");
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  Diagnostics &d_;
  ProgramComments &c_;
  ProgramBuilder b_;
  std::unordered_map<std::string, ValueId> names_;
  std::unordered_map<std::string, Loc> later_;
  static constexpr int kMaxBlockDepth = 256;
  int blockDepth_ = 0;
  bool tooDeep_ = false;
};

}  // namespace

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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.error({}, "cannot open '" + path + "'");
    Program p;
    p.filename = path;
    return p;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, diags, comments);
}

}  // namespace hostjit
