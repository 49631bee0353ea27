// lexer.h - tokens of the .hir format, with comments attached to tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hostjit/ir/diagnostics.h"

namespace hostjit {

enum class Tok : uint8_t {
  Ident,    // kernel, alloc, f32, ...
  Percent,  // %name (text without '%')
  At,       // @name (text without '@')
  Int,
  Float,
  String,   // text unescaped
  Punct,    // one of ( ) [ ] { } < > , : = ?  and "->"
  End
};

struct Token {
  Tok kind = Tok::End;
  std::string text;
  int64_t i = 0;
  double f = 0.0;
  Loc loc;
  std::vector<std::string> leadingComments;  // own-line comments just above
  std::string trailingComment;               // a comment after it on its line, if it is the last token there
};

// Splits text into tokens; lexical errors go to diags. Comments that follow
// the last token are returned in `tail`.
std::vector<Token> lex(std::string_view text, Diagnostics &diags, std::vector<std::string> &tail);

}  // namespace hostjit
