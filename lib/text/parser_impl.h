// parser_impl.h - the Parser: tokens in, a Program out through the
// ProgramBuilder, with its comments; its methods are in parser.cpp (tokens,
// types, kernels, the signature) and parse_statements.cpp (the body).
#pragma once

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "hostjit/text/text.h"
#include "lexer.h"

namespace hostjit::text_detail {

class Parser {
 public:
  Parser(std::vector<Token> toks, Diagnostics &d, ProgramComments &c) : t_(std::move(toks)), d_(d), c_(c) {}

  Program run(std::vector<std::string> tail);

 private:
  struct Failed {};

  const Token &peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  const Token &next();
  bool isIdent(const char *s) const { return peek().kind == Tok::Ident && peek().text == s; }
  bool isPunct(const char *s) const { return peek().kind == Tok::Punct && peek().text == s; }
  static std::string describe(const Token &t);
  void error(Loc loc, std::string msg) { d_.error(loc, std::move(msg)); }
  [[noreturn]] void fail(const std::string &what);
  void expectPunct(const char *p);
  std::string expectIdent(const char *what);
  void skipBraced();
  void skipToTopLevel();
  void skipLine(uint32_t line);

  DType parseDTypeTok(bool scalarOnly);

  std::vector<int64_t> parseDims();

  void parseKernel();
  // An attribute's value (kernel_attrs.def's kinds), after its '='; each
  // returns the comment after it.
  std::string attrText(std::optional<std::string> &slot, const std::string &key);
  std::string attrFlag(bool &flag, const std::string &key);
  std::string attrDims(std::optional<std::array<int64_t, 3>> &dims, const std::string &key);

  // Collects every `%name =` of the function body, so a use before the
  // definition can be told apart from an undefined name.
  void prescanDefinitions(size_t from);
  bool isPunctAt(size_t k, const char *p) const;

  void parseFunc();

  // One statement and the comments above and after it; a statement that
  // does not parse is skipped to the end of its line.
  void parseStmtWithComments();

  // `%r, ... = for %i = lo to hi iter(%c = %init, ...) { ... }`, after the
  // 'for'; `results` are the names before the '=' (none for a plain loop).
  void parseFor(const Token &kw, const std::vector<const Token *> &results);

  // The operands of a collective, after its keyword.
  void parseCollective(Collective::Kind kind, Loc loc);
  // The operands and options of a matmul, after its keyword.
  void parseMatmul(Loc loc);

  // `on %s { ... }`, after the 'on'.
  void parseOn(const Token &kw);

  void enterBlock(const Token &kw);

  // From the '{' of the block whose first statement is body[index] to its
  // '}', which `close` adds.
  template <class Close>
  void parseBlock(const Token &kw, size_t index, const char *what, Close close);

  Operand parseOperand();

  std::vector<Operand> parseOperandList(const char *close);

  std::array<Operand, 3> parseTriple(const char *kw);

  void define(const Token &name, ValueId id);

  void parseStmt();

  std::vector<Token> t_;
  size_t pos_ = 0;
  Diagnostics &d_;
  ProgramComments &c_;
  ProgramBuilder b_;
  std::unordered_map<std::string, ValueId> names_;
  std::unordered_map<std::string, Loc> later_;
  // Names defined by a line with a syntax error: their uses are not errors
  // of their own.
  std::unordered_set<std::string> broken_;
  static constexpr int kMaxBlockDepth = 256;
  int blockDepth_ = 0;
  bool tooDeep_ = false;
};

}  // namespace hostjit::text_detail
